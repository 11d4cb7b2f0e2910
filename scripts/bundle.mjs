// Bundles the service's entry (src/main.ts) and its pure-JavaScript dependencies (MikroORM, knex, pg,
// pino, the ACP SDK, zod...) into dist/src/main.js and a few chunks beside it (one per set of lazily
// imported modules: the migrations, the MCP SDK, the xmpp client load only when used). At a start
// node then reads a handful of files instead of resolving, reading and wrapping about a thousand
// CommonJS modules one by one: that loader was the largest cost of a second start
// (docs/benchmarks.md, second start). Run by scripts/build.mjs after it has compiled the tree, whose
// other files (the PGlite thread, the demo agent, the sandbox script, the world) stay where they are.
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

/** Packages left to node: the PGlite thread's (it runs in a worker, from its own file), esbuild, optional drivers knex names. */
export const EXTERNAL = [
  '@electric-sql/*', 'esbuild', 'tsx',
  'pg-native', 'pg-query-stream', 'pg-cloudflare', 'mysql', 'mysql2', 'sqlite3', 'better-sqlite3', 'oracledb', 'tedious', 'libsql', '@libsql/*', 'mariadb',
];

/**
 * Source edits made only in the bundle, each required to apply (a build fails when its text is gone,
 * so an edit of the source cannot silently bring back the slow path): `require` where the sources use
 * `createRequire` (an ES import of a CommonJS package makes node lex it; a bundle needs neither).
 */
const SOURCE_EDITS = {
  'adapters/mikro-orm/packages.ts': [['const require = createRequire(import.meta.url);', '']],
  'adapters/postgres/notify-connection.ts': [["createRequire(import.meta.url)('pg')", "require('pg')"]],
};

/** Edits of dependencies: each is what the package's own fallback finds at run time, made static. */
const PACKAGE_EDITS = [
  // MikroORM reads its version from `../../package.json` (its sources) or `../package.json` (as published).
  { file: /@mikro-orm[\\/]core[\\/]utils[\\/]Utils\.js$/, edits: [["require('../../package.json')", "require('../package.json')"]] },
  // pg asks whether it runs in a Cloudflare Worker as it loads: on node the answer is no, but asking
  // (`typeof Response`) makes node load undici, ~100 ms of a start, for nothing the service uses then.
  { file: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/, edits: [['if (isCloudflareRuntime()) {', 'if (false) { // node (scripts/bundle.mjs)']] },
];

const edit = (text, edits, file) => {
  for (const [from, to] of edits) {
    if (!text.includes(from)) throw new Error(`bundle: ${file} no longer holds ${JSON.stringify(from)}`);
    text = text.replace(from, to);
  }
  return text;
};

/**
 * Bundles the entry `entry` (a source path under `root`) into `out` (a dist tree), at the entry's own
 * place (src/main.ts → out/src/main.js), its chunks beside it when `splitting`. `import.meta.url` in
 * each bundled source file is that file's own URL in `out` (its compiled .js), so the files it finds
 * beside itself (the PGlite thread, the demo agent, the world) are found there.
 */
async function bundleEntry(root, out, entry, splitting) {
  const { build } = await import('esbuild');
  const outdir = dirname(join(out, entry));
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    splitting,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    entryNames: '[name]',
    chunkNames: 'chunk-[name]-[hash]',
    external: EXTERNAL,
    // CommonJS modules in an ES bundle call `require` for node's built-ins (and for names known only at run time).
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);" },
    logLevel: 'error',
    plugins: [
      {
        name: 'service-sources',
        setup(b) {
          for (const { file, edits } of PACKAGE_EDITS) {
            b.onLoad({ filter: file }, async (args) => ({ contents: edit(await readFile(args.path, 'utf8'), edits, args.path), loader: 'js' }));
          }
          b.onLoad({ filter: /\.ts$/ }, async (args) => {
            if (args.path.includes('node_modules')) return undefined;
            const file = relative(root, args.path).split('\\').join('/');
            let text = await readFile(args.path, 'utf8');
            if (SOURCE_EDITS[file] !== undefined) text = edit(text, SOURCE_EDITS[file], file);
            const own = relative(outdir, join(out, file.replace(/\.ts$/, '.js'))).split('\\').join('/');
            text = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`);
            return { contents: text, loader: 'ts' };
          });
        },
      },
    ],
  });
  if (result.errors.length > 0) throw new Error(`bundle: esbuild failed on ${entry}`);
}

/**
 * Writes the service's bundle (out/src/main.js and its chunks) and the demo agent's
 * (out/src/demo/acp-agent.js, one file: the agents a demo start asks what they offer load the ACP SDK
 * and zod from it), over their compiled files.
 */
export async function bundleService(root, out) {
  await bundleEntry(root, out, 'src/main.ts', true);
  await bundleEntry(root, out, 'src/demo/acp-agent.ts', false);
}
