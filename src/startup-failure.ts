import { DataDirLockedError } from '../adapters/embedded/data-dir-lock.ts';
import { DatabaseOpenError } from '../adapters/mikro-orm/open-error.ts';
import type { Config } from './config.ts';
import { WorldFileError } from './open-storage.ts';

/** The exit status of a start that could not go on (as for a bad configuration). */
export const STARTUP_FAILURE_STATUS = 2;

/** Why a start failed, as the one line printed on stderr; `known` is false for a bug (its stack is logged). */
export interface StartupFailure {
  readonly line: string;
  readonly known: boolean;
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

/** Listening errors by code: the address and what to do about it. */
function listenFailure(error: NodeJS.ErrnoException, where: string, host: string): string | null {
  switch (error.code) {
    case 'EADDRINUSE':
      return `Cannot listen on ${where}: the address is in use (another process listens there; stop it or set PORT)`;
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${where}: HOST ${host} is not an address of this machine`;
    case 'EACCES':
      return `Cannot listen on ${where}: permission denied (ports below 1024 need privileges; set PORT)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `Cannot listen on ${where}: HOST ${host} does not resolve to an address`;
    default:
      return null;
  }
}

/**
 * One line naming why the start failed: a world file that does not validate, a data dir in use, a
 * database that cannot be opened, an address that cannot be listened on. Anything else is a bug:
 * its message only here, its stack in the log.
 */
export function describeStartupFailure(error: unknown, config: Pick<Config, 'host' | 'port'>): StartupFailure {
  if (error instanceof WorldFileError) return { line: `Invalid world file: ${error.message}`, known: true };
  if (error instanceof DataDirLockedError || error instanceof DatabaseOpenError) return { line: error.message, known: true };
  if (error instanceof Error && 'code' in error) {
    const where = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    const line = listenFailure(error as NodeJS.ErrnoException, where, config.host);
    if (line !== null) return { line, known: true };
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ETIMEDOUT' || (code === 'ENOENT' && (error as NodeJS.ErrnoException).syscall === 'connect')) {
      return { line: `Cannot reach the database: ${firstLine(error)}`, known: true };
    }
  }
  return { line: `Start-up failed: ${firstLine(error)}`, known: false };
}
