import { closeSync, constants, linkSync, lstatSync, openSync, renameSync, rmSync, type Stats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';

/** The Unix socket inside the data dir that its holder listens on, whatever network namespace it is in. */
export const LOCK_SOCKET = 'console.sock';

/** What binding a data dir's socket found: this process now listens on it, or a live process does. */
export type DirSocket = { readonly held: false; readonly release: () => void } | { readonly held: true };

/** The longest path a Unix socket address holds (sun_path is 108 bytes with its NUL). */
const SUN_PATH_MAX = 107;

/** How often a socket found stale is removed and bound again before giving up (another keeps winning). */
const TAKE_OVER_ATTEMPTS = 5;

/** How long a connect to the socket may take; one that never answers is taken for a live holder. */
const PROBE_MS = 1_000;

/** Listens on `address` (a path, or an abstract name); resolves false when it is taken. */
export function listenOn(server: Server, address: string): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error));
    server.once('error', failed);
    server.listen({ path: address }, () => {
      server.off('error', failed);
      resolve(true);
    });
  });
}

/**
 * Whether a process listens on the socket at `address`. Refused (a socket its holder left as it died,
 * or a file that is no socket) or gone: no. Any other failure, or no answer in time: yes, so that
 * doubt refuses a start rather than opening the database twice.
 */
function answers(address: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect({ path: address });
    const done = (live: boolean) => {
      socket.destroy();
      resolve(live);
    };
    socket.setTimeout(PROBE_MS, () => done(true));
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => done(!['ECONNREFUSED', 'ENOENT'].includes(error.code ?? '')));
  });
}

const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
};

/**
 * Removes the stale socket at `file` only if it is still the one probed: it is first moved aside
 * (atomic), so a starter in another namespace that replaced it with its own live socket meanwhile
 * keeps it (it is moved back). Two starters finding one stale socket thus never both win.
 */
function removeIfStill(file: string, probed: Stats): void {
  const aside = `${file}.${randomBytes(6).toString('hex')}.stale`;
  try {
    renameSync(file, aside);
  } catch {
    return; // gone already: bind again
  }
  const moved = lstatOrNull(aside);
  if (moved !== null && (moved.ino !== probed.ino || moved.dev !== probed.dev)) {
    try {
      linkSync(aside, file);
    } catch {
      // Another took the name in that instant: it is probed on the next attempt.
    }
  }
  rmSync(aside, { force: true });
}

/**
 * Listens on `<dir>/console.sock`, which keeps the directory's holders apart across network
 * namespaces (containers sharing a volume), where an abstract socket cannot: the name lives in the
 * file system. The kernel still frees it as the holder dies, in effect: the file stays, but a connect
 * to it is refused from then on, and a socket that refuses is stale and is taken over. The socket is
 * reached by its path when that fits a socket address, else through `/proc/self/fd` and a descriptor
 * of the directory, held open while the socket is. Node removes the file when the socket closes.
 */
export async function bindDirSocket(dir: string): Promise<DirSocket> {
  const file = join(dir, LOCK_SOCKET);
  let dirFd: number | null = null;
  let address = file;
  if (Buffer.byteLength(file) > SUN_PATH_MAX) {
    dirFd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    address = `/proc/self/fd/${dirFd}/${LOCK_SOCKET}`;
  }
  const closeDir = () => {
    if (dirFd !== null) closeSync(dirFd);
    dirFd = null;
  };
  try {
    for (let attempt = 0; attempt < TAKE_OVER_ATTEMPTS; attempt++) {
      // A server whose listen failed is not listened on again: a fresh one for each attempt.
      const server = createServer((socket) => socket.destroy());
      if (await listenOn(server, address)) {
        // It must never keep a process alive that has nothing else left.
        server.unref();
        return {
          held: false,
          release: () => {
            server.close(); // removes the file, through the directory's descriptor if it is used
            closeDir();
          },
        };
      }
      const probed = lstatOrNull(file);
      if (probed === null) continue; // removed meanwhile
      if (await answers(address)) break;
      removeIfStill(file, probed);
    }
  } catch (error) {
    closeDir();
    throw error;
  }
  closeDir();
  return { held: true };
}
