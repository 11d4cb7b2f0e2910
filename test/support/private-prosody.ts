import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/**
 * An XMPP server of the test's own: Prosody from a config file in a temporary directory, in the
 * foreground, on a free loopback port, with a MUC component that archives its rooms (MAM). No TLS,
 * no server-to-server, no HTTP. Fault tests stop it and start it again on the same port and data;
 * the machine's own Prosody service (if any) is never touched.
 */
export interface PrivateProsody {
  /** The c2s port on 127.0.0.1. */
  readonly port: number;
  /** `xmpp://127.0.0.1:<port>`, the `service` of an xmpp channel. */
  readonly service: string;
  readonly domain: string;
  /** The MUC component's domain (rooms are `<name>@<muc>`). */
  readonly muc: string;
  /** The directory of its config and data (the config is `prosody.cfg.lua`, for an operator to copy). */
  readonly dir: string;
  /** Registers an account (`user@domain`) with prosodyctl. */
  register(user: string, password: string): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not stopped after a few seconds; resolves once it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its directory; idempotent. */
  destroy(): Promise<void>;
}

const PROSODY = '/usr/bin/prosody';
const PROSODYCTL = '/usr/bin/prosodyctl';
const START_MS = 15_000;
const STOP_GRACE_MS = 5_000;

/** Why no private Prosody can run here (the reason a test skips with), or null when one can. */
export function prosodyMissing(): string | null {
  const missing = [process.env.PROSODY_BIN ?? PROSODY, process.env.PROSODYCTL_BIN ?? PROSODYCTL].filter((path) => !existsSync(path));
  if (missing.length > 0) {
    return `Prosody is not installed: no ${missing.join(' nor ')} (apt-get install prosody, or set PROSODY_BIN and PROSODYCTL_BIN)`;
  }
  return null;
}

/** The config the tests run (and docs/channels.md shows): loopback, no TLS, MUC with MAM. */
export function prosodyConfig(options: { dir: string; port: number; domain: string; muc: string }): string {
  const { dir, port, domain, muc } = options;
  return `-- A private Prosody for tests and local trials: loopback only, no TLS, no s2s.
daemonize = false
run_as_root = true
pidfile = "${join(dir, 'prosody.pid')}"
data_path = "${join(dir, 'data')}"
certificates = "${join(dir, 'certs')}"
interfaces = { "127.0.0.1" }
c2s_ports = { ${port} }
c2s_direct_tls_ports = { }
s2s_ports = { }
s2s_direct_tls_ports = { }
http_ports = { }
https_ports = { }
component_ports = { }
c2s_require_encryption = false
allow_unencrypted_plain_auth = true
-- A signed-in client's stanza may be up to 2 MiB (Prosody 0.12's default is 256 KiB): a 1 MB chat body reaches the bot.
c2s_stanza_size_limit = 2 * 1024 * 1024
authentication = "internal_hashed"
storage = "internal"
log = { { levels = { min = "info" }, to = "file", filename = "${join(dir, 'prosody.log')}" } }
modules_enabled = { "roster"; "saslauth"; "disco"; "ping"; "posix"; "mam"; "smacks"; "carbons" }
modules_disabled = { "s2s"; "tls" }
archive_expires_after = "never"

VirtualHost "${domain}"

Component "${muc}" "muc"
  modules_enabled = { "muc_mam" }
  muc_log_by_default = true
  muc_log_all_rooms = true
  max_archive_query_results = 200
`;
}

/** Starts a new private Prosody; throws when it is missing (check `prosodyMissing` first). */
export async function startPrivateProsody(options: { domain?: string } = {}): Promise<PrivateProsody> {
  const missing = prosodyMissing();
  if (missing !== null) throw new Error(missing);
  const domain = options.domain ?? 'localhost';
  const muc = `conference.${domain}`;
  const dir = mkdtempSync(join(tmpdir(), 'console-prosody-'));
  mkdirSync(join(dir, 'data'));
  mkdirSync(join(dir, 'certs'));
  const port = await freePort();
  const config = join(dir, 'prosody.cfg.lua');
  writeFileSync(config, prosodyConfig({ dir, port, domain, muc }));
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let destroyed = false;

  const killNow = (): void => {
    // Synchronous, for process exit: a crashed test must not leave a server running.
    try {
      child?.kill('SIGKILL');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killNow);

  const start = async (): Promise<void> => {
    if (child !== null) throw new Error('the private Prosody is running already');
    const output: string[] = [];
    const started = spawn(process.env.PROSODY_BIN ?? PROSODY, ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
    child = started;
    started.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    started.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    const deadline = Date.now() + START_MS;
    while (!(await accepts(port))) {
      if (started.exitCode !== null || started.signalCode !== null) {
        child = null;
        throw new Error(`prosody exited at start (${started.exitCode ?? started.signalCode}): ${output.join('').slice(-2_000)}`);
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`prosody did not listen on ${port} within ${START_MS} ms: ${output.join('').slice(-2_000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const stop = async (): Promise<void> => {
    const running = child;
    if (running === null) return;
    if (running.exitCode === null && running.signalCode === null) {
      running.kill('SIGTERM');
      // It may take a few seconds to stop on SIGTERM: then SIGKILL.
      const late = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(late);
    }
    child = null;
    // Until the port is free again, a restart could not listen on it.
    const deadline = Date.now() + STOP_GRACE_MS;
    while ((await accepts(port)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  };

  try {
    await start();
  } catch (error) {
    process.removeListener('exit', killNow);
    killNow();
    throw error;
  }

  return {
    port,
    service: `xmpp://127.0.0.1:${port}`,
    domain,
    muc,
    dir,
    register: (user, password) => run([process.env.PROSODYCTL_BIN ?? PROSODYCTL, '--config', config, 'register', user, domain, password], 20_000),
    stop,
    start,
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      process.removeListener('exit', killNow);
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether something accepts a TCP connection on 127.0.0.1:port now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Runs a command with a time-out; rejects with its output when it fails. */
function run(command: readonly string[], ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command[0]!, command.slice(1), { timeout: ms, killSignal: 'SIGKILL', cwd: tmpdir() }, (error, stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(`${command.slice(0, 4).join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
    });
  });
}
