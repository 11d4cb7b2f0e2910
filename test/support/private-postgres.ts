import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/**
 * A PostgreSQL cluster of the test's own: initdb'd in a temporary directory, listening on a free
 * loopback port with trust authentication. Fault tests stop and start it; the machine's shared
 * cluster (5432) is never touched.
 */
export interface PrivatePostgres {
  readonly port: number;
  /** The `postgres` database as the `postgres` superuser (scratch databases are created through it). */
  readonly url: string;
  /** Fast shutdown: clients are cut, as a database restart does. Waits until it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port; waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it at once and removes its directory; idempotent. */
  destroy(): Promise<void>;
}

/** Every wait is bounded: pg_ctl gets its own `-t`, and each command is killed a little after it. */
const INITDB_MS = 60_000;
const PG_CTL_SECONDS = 20;

interface Binaries {
  readonly bin: string;
  /** The command prefix that runs them as a user PostgreSQL accepts (it refuses to run as root). */
  readonly asUser: readonly string[];
  /** Who must own the cluster's directory, when the tests run as root. */
  readonly owner: { readonly uid: number; readonly gid: number } | null;
}

/** The PostgreSQL server binaries, or why there are none usable: the reason a test skips with. */
export function findPostgresBinaries(): Binaries | { readonly missing: string } {
  const bin = candidates().find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
  if (bin === undefined) return { missing: 'PostgreSQL server binaries (initdb, pg_ctl) are not installed (apt-get install postgresql, or set PG_BIN)' };
  if (process.getuid?.() !== 0) return { bin, asUser: [], owner: null };
  // As root: the cluster runs as the postgres user, through runuser (util-linux).
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', timeout: 5_000 }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', timeout: 5_000 }).trim());
    const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((path) => existsSync(path));
    if (runuser === undefined) return { missing: 'running as root, and runuser is not installed to run PostgreSQL as postgres' };
    return { bin, asUser: [runuser, '-u', 'postgres', '--'], owner: { uid, gid } };
  } catch {
    return { missing: 'running as root, and there is no postgres user to run PostgreSQL as' };
  }
}

function candidates(): string[] {
  const found: string[] = [];
  if (process.env.PG_BIN) found.push(process.env.PG_BIN);
  try {
    // Debian's layout, newest major version first.
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    found.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  } catch {
    // not Debian's layout
  }
  found.push(...(process.env.PATH ?? '').split(':').filter((dir) => dir !== ''));
  return found;
}

/** Starts a new private cluster; throws when the binaries are missing (check `findPostgresBinaries` first). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const binaries = findPostgresBinaries();
  if ('missing' in binaries) throw new Error(binaries.missing);
  const dir = mkdtempSync(join(tmpdir(), 'console-pg-'));
  if (binaries.owner !== null) chownSync(dir, binaries.owner.uid, binaries.owner.gid);
  const data = join(dir, 'data');
  const command = (tool: string, args: string[]): string[] => [...binaries.asUser, join(binaries.bin, tool), ...args];
  const run = (tool: string, args: string[], ms: number) => exec(command(tool, args), ms);
  let destroyed = false;
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], INITDB_MS);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  // Loopback only, its socket in its own directory, no durability needed: a test's cluster.
  const settings = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const pgCtl = (args: string[]) => run('pg_ctl', ['-D', data, '-w', '-t', String(PG_CTL_SECONDS), ...args], (PG_CTL_SECONDS + 5) * 1_000);
  const start = async () => {
    await pgCtl(['-l', join(dir, 'log'), '-o', settings, 'start']);
  };
  const stopNow = (): void => {
    // Synchronous, for process exit: a crashed test must not leave a server running.
    const [file, ...args] = command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '10', 'stop']);
    try {
      execFileSync(file!, args, { stdio: 'ignore', timeout: 15_000 });
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);
  try {
    await start();
  } catch (error) {
    process.removeListener('exit', stopNow);
    stopNow();
    throw error;
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop: async () => {
      await pgCtl(['-m', 'fast', 'stop']);
    },
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      process.removeListener('exit', stopNow);
      await pgCtl(['-m', 'immediate', 'stop']).catch(() => {}); // already stopped is fine
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs a command with a time-out; rejects with its output when it fails. */
function exec(command: readonly string[], ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command[0]!, command.slice(1), { timeout: ms, killSignal: 'SIGKILL', cwd: tmpdir() }, (error, stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(`${command.slice(-1)[0]} failed: ${error.message}\n${stdout}${stderr}`));
    });
  });
}

