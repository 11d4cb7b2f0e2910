import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorktreeSite } from './worktree-site.ts';

/** Where this instance notes which checkpoint a thread's worktree holds (`<root>/.current/<thread id>`). */
const currentOf = (site: WorktreeSite, threadId: string) => join(site.root, '.current', threadId);

/** The checkpoint this instance's worktree of the thread was last known to hold (taken here, or restored here), or null. */
export async function currentCheckpoint(site: WorktreeSite, threadId: string): Promise<string | null> {
  const raw = await readFile(currentOf(site, threadId), 'utf8').catch(() => null);
  return raw !== null && /^[0-9a-f]{40,64}$/.test(raw.trim()) ? raw.trim() : null;
}

/** Notes that this instance's worktree of the thread holds `commit`, whole or not at all. */
export async function noteCurrent(site: WorktreeSite, threadId: string, commit: string): Promise<void> {
  const file = currentOf(site, threadId);
  await mkdir(join(site.root, '.current'), { recursive: true });
  await writeFile(`${file}.tmp`, commit);
  await rename(`${file}.tmp`, file);
}

/** Where this instance notes a checkpoint of the thread its remote did not take yet (`<root>/.unpushed/<thread id>`: its ref). */
const unpushedOf = (site: WorktreeSite, threadId: string) => join(site.root, '.unpushed', threadId);

/** The checkpoint ref of the thread this instance still has to push, or null. */
export async function unpushed(site: WorktreeSite, threadId: string): Promise<string | null> {
  const raw = await readFile(unpushedOf(site, threadId), 'utf8').catch(() => null);
  return raw !== null && /^refs\/console\/checkpoints\/[0-9a-f-]{36}\/[A-Za-z0-9_-]{1,200}$/.test(raw.trim()) ? raw.trim() : null;
}

/** Notes (`ref`) or forgets (null) the checkpoint of the thread this instance still has to push. */
export async function noteUnpushed(site: WorktreeSite, threadId: string, ref: string | null): Promise<void> {
  const file = unpushedOf(site, threadId);
  if (ref === null) return void (await rm(file, { force: true }));
  await mkdir(join(site.root, '.unpushed'), { recursive: true });
  await writeFile(`${file}.tmp`, ref);
  await rename(`${file}.tmp`, file);
}
