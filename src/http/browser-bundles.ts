/*
 * The browser scripts the console origin serves (the artifact viewer's host, the console UI), bundled by
 * esbuild from their sources. `scripts/build.mjs` writes them under `dist/assets/` once per build, so the
 * compiled service (`npm start`, the image) serves files and bundles nothing; run from the sources (the
 * tests), a script is bundled at its first request.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each bundle's entry, relative to the repository root. */
export const BUNDLES = { viewer: 'src/viewer/host.ts', console: 'src/console-ui/main.tsx' } as const;
export type BundleName = keyof typeof BUNDLES;

/** Bundles one script from the sources under `root`. */
export async function bundle(root: string, name: BundleName): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [join(root, BUNDLES[name])],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error(`esbuild produced no ${name} script`);
  return output.text;
}

/** The script as served: the prebuilt file when compiled, else bundled at first use; a failure is tried again next time. */
export function servedBundle(name: BundleName): () => Promise<string> {
  const here = fileURLToPath(import.meta.url);
  const root = join(dirname(here), '..', '..'); // src/http → the repository (or dist/)
  const compiled = here.endsWith('.js');
  let text: Promise<string> | undefined;
  return () =>
    (text ??= (compiled ? readFile(join(root, 'assets', `${name}.js`), 'utf8') : bundle(root, name)).catch((error: unknown) => {
      text = undefined;
      throw error;
    }));
}
