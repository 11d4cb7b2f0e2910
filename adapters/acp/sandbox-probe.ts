import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** Whether agents can be confined here: the `bwrap` to use, or why not. */
export type SandboxProbe = { readonly ok: true; readonly bwrap: string } | { readonly ok: false; readonly reason: string };

/** The first executable `bwrap` on `path` (the service's `PATH`), or null. */
async function findBwrap(path: string): Promise<string | null> {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'bwrap');
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return null;
}

/**
 * Finds `bwrap` on `path` and runs `true` in a sandbox made as an agent's is (its own PID, IPC and
 * UTS namespaces, no capabilities): bubblewrap may be installed where namespaces cannot be made (a
 * container without them, user namespaces off for a non-root user), and only trying tells.
 */
export async function probeSandbox(path: string, bwrap?: string): Promise<SandboxProbe> {
  const found = bwrap ?? (await findBwrap(path));
  if (found === null) return { ok: false, reason: 'bubblewrap is not installed (no bwrap on PATH)' };
  const args = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', 'true'];
  return new Promise((done) => {
    execFile(found, args, { timeout: 10_000, env: { PATH: path } }, (error, _stdout, stderr) => {
      if (error === null) return done({ ok: true, bwrap: found });
      const said = String(stderr).trim().split('\n')[0]?.slice(0, 300) || error.message.slice(0, 300);
      done({ ok: false, reason: `${found} cannot create a sandbox here: ${said}` });
    });
  });
}
