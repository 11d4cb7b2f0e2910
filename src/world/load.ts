import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { fail, ok, type Issue, type Result } from '../../domain/result.ts';
import type { World } from '../../domain/world.ts';
import { referenceIssues } from './references.ts';
import { WorldFileSchema } from './schema.ts';

/** SHA-256 hex of a token: the only form in which tokens are stored. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * An issue as a path and a reason; a union's issue is replaced by the issues inside the option that
 * got furthest (an object whose field is wrong, rather than "not a string either"), which name the field.
 */
function issuesOf(issue: v.BaseIssue<unknown>, prefix: string): Issue[] {
  const path = [prefix, v.getDotPath(issue) ?? ''].filter((part) => part !== '').join('.');
  const inner = (issue.issues ?? []).filter((sub) => (sub.path?.length ?? 0) > 0);
  return issue.type === 'union' && inner.length > 0 ? inner.flatMap((sub) => issuesOf(sub, path)) : [{ path, message: issue.message }];
}

/** Validates a world file's JSON value; every issue names its path and reason. */
export function parseWorld(value: unknown): Result<World, Issue[]> {
  const parsed = v.safeParse(WorldFileSchema, value);
  if (!parsed.success) {
    return fail(parsed.issues.flatMap((issue) => issuesOf(issue, '')));
  }
  const file = parsed.output;
  const issues = referenceIssues(file);
  if (issues.length > 0) return fail(issues);
  return ok({
    users: file.users.map((user) => ({ id: user.id, name: user.name, token_hash: hashToken(user.token), role: user.role })),
    projects: file.projects.map((project) => (typeof project === 'string' ? { name: project, directory: null, repo: null, base: null } : project)),
    agents: file.agents.map((agent) => ({ ...agent, command: agent.command ?? null })),
    // A chat channel's linked users are its links; its server, account or tokens are kept apart from the catalog entry.
    channels: file.channels.map(({ xmpp, slack, links, defaults, ...entry }) => {
      const channel = { ...entry, defaults: defaults ?? null };
      return xmpp === undefined && slack === undefined ? channel : { ...channel, linked_users: Object.keys(links ?? {}), addresses: [] };
    }),
    xmpp: file.channels.flatMap((channel) =>
      channel.xmpp === undefined ? [] : [{ channel: channel.id, account: channel.xmpp, links: channel.links ?? {} }]),
    slack: file.channels.flatMap((channel) =>
      channel.slack === undefined ? [] : [{ channel: channel.id, settings: channel.slack, links: channel.links ?? {} }]),
    installations: file.installations,
    artifacts: file.artifacts,
    threads: file.threads,
  });
}

/**
 * Reads and validates a world file; a file that cannot be read or is not JSON is an issue too.
 * `extend` changes the JSON before it is validated (the demo world's optional XMPP channel).
 */
export async function loadWorldFile(path: string | URL, extend: (value: unknown) => unknown = (value) => value): Promise<Result<World, Issue[]>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return fail([{ path: '', message: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return fail([{ path: '', message: `is not JSON: ${(error as Error).message}` }]);
  }
  return parseWorld(extend(value));
}
