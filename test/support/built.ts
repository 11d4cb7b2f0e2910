import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The compiled service (dist/), which the processes a test starts run, as `npm start` does: no TypeScript
 * compiled at their start. test/run.mjs builds it before any test runs; a file run alone builds it here
 * when a source changed since (scripts/build.mjs does nothing when the build is fresh).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
let checked = false;

function built(path: string): string {
  if (!checked) {
    const build = spawnSync(process.execPath, [`${root}scripts/build.mjs`], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error('scripts/build.mjs failed: the compiled service is not there to start');
    checked = true;
  }
  return `${root}${path}`;
}

/** `node <this>` starts the service, as `npm start` does after its build. */
export const serviceEntry = (): string => built('dist/src/main.js');

/** The demo ACP agent, compiled: the argv of a process that speaks ACP on its stdio. */
export const builtDemoAgent = (): readonly string[] => [process.execPath, built('dist/src/demo/acp-agent.js')];

/** A compiled module of the service, as a file URL to import in a process a test starts (`adapters/x.ts` -> dist/adapters/x.js). */
export const builtModule = (source: string): string => new URL(`file://${built(`dist/${source.replace(/\.ts$/, '.js')}`)}`).href;
