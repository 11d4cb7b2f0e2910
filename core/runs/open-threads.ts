import type { Failure } from '../../domain/errors.ts';
import type { DirectiveOrigin, User } from '../../domain/model.ts';
import { ok, type Result } from '../../domain/result.ts';
import { titleFromDirective } from '../../domain/thread-title.ts';
import { findRoute, routeNamesAgent, type RouteInfo } from '../../domain/vocabulary.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { DirectiveAnswer, ThreadOpening } from '../../ports/directive-writes.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { TurnLease } from '../../ports/turn-leases.ts';
import type { AgentVocabularies, KnownAgent } from '../agents/vocabularies.ts';
import { eachAtMost } from '../each-at-most.ts';
import { consoleRoutesOf, launchTurn, type Directive, type TurnStores } from './directives.ts';
import type { BackgroundTurns } from './turns.ts';

/** A directive to a key of its sender's, as the directive use case takes it. */
export interface KeyedDirective {
  readonly user: User;
  readonly key: string;
  readonly body: Directive;
  readonly origin: DirectiveOrigin | null;
}

/** What a directive of a batch came to: `submit`'s answer, or an error thrown (nothing of it written; it may be sent again). */
export type OpenAnswer = Result<DirectiveAnswer, Failure> | { readonly failed: unknown };

/** Directives sent one by one, at most this many at once, where they cannot be opened together. */
const ONE_BY_ONE = 16;

/**
 * Directives to keys, many at once (a look's scheduled fires to new threads, contract section 12), answered as
 * `submit` answers each. The plain case is written together (DirectiveWrites.openThreads): a key that names no
 * thread yet, no posture or effort picked, a route and project the catalog offers, and a project without a
 * repository (a repository project's worktree is made for each thread on its first turn). Every other directive,
 * and every opening the write leaves out (its key taken meanwhile), goes through `submit`, which decides it as it
 * decides any: one decision procedure for everything but the plain case's speed.
 */
export function threadOpener(deps: {
  readonly storage: TurnStores & { readonly catalog: Pick<Catalog, 'channels' | 'projects' | 'project'> };
  readonly vocabularies: AgentVocabularies;
  readonly bus: EventBus;
  readonly turns: BackgroundTurns;
  readonly runDirectory: RunDirectory;
  readonly lease: TurnLease;
  readonly submit: (user: User, ref: string, body: Directive, origin: DirectiveOrigin | null) => Promise<Result<DirectiveAnswer, Failure>>;
}) {
  const { storage, bus } = deps;

  /** The route and agent a new thread's first directive runs on (as `submit` picks them), or null: not the plain case. */
  async function routeOf(model: string | null): Promise<{ route: RouteInfo; known: KnownAgent } | null> {
    const offered = await consoleRoutesOf(storage.catalog, deps.vocabularies, model === null ? () => true : (id) => routeNamesAgent(model, id));
    const route = model === null ? offered.routes[0] ?? null : findRoute(offered.routes, model);
    const known = route === null ? undefined : offered.known.find((candidate) => candidate.agent.id === route.agent);
    return route === null || known === undefined ? null : { route, known };
  }

  /** Where a new thread of the project works, or null: a repository project (its worktree is made per thread). */
  async function directoryOf(project: string | null): Promise<string | null> {
    if (project !== null && (await storage.catalog.project(project))?.repo != null) return null;
    // Not a repository project: a new thread's directory is its project's (RunDirectory), whichever thread it is.
    const located = await deps.runDirectory({ id: '', owner: '', project, worktree: null, fork_of: null, fork_cutoff: null });
    return located.ok ? located.value : null;
  }

  return async function openAll(directives: readonly KeyedDirective[]): Promise<OpenAnswer[]> {
    const answers: OpenAnswer[] = new Array(directives.length);
    // What the plain case reads is read once per look: a route per model, a directory per project.
    const routes = new Map<string | null, ReturnType<typeof routeOf>>();
    const directories = new Map<string | null, Promise<string | null>>();
    let projects: Promise<string[]> | null = null;
    const plain: { index: number; opening: ThreadOpening; known: KnownAgent; directory: string }[] = [];
    const alone: number[] = [];
    for (const [index, { user, key, body, origin }] of directives.entries()) {
      const picks = body.permission_mode !== null || body.effort !== null || (body.when_busy ?? 'reject') !== 'reject';
      // A read that fails sends the directive the one-by-one way, which reads again and answers what it comes to:
      // one directive's trouble is never the whole batch's.
      const plainCase = async (): Promise<{ routed: NonNullable<Awaited<ReturnType<typeof routeOf>>>; directory: string } | null> => {
        if (picks || (body.project !== null && !(await (projects ??= storage.catalog.projects())).includes(body.project))) return null;
        if (!routes.has(body.model)) routes.set(body.model, routeOf(body.model));
        if (!directories.has(body.project)) directories.set(body.project, directoryOf(body.project));
        const [routed, directory] = await Promise.all([routes.get(body.model)!, directories.get(body.project)!]);
        return routed === null || directory === null ? null : { routed, directory };
      };
      const found = await plainCase().catch(() => null);
      if (found === null) {
        alone.push(index);
        continue;
      }
      const { routed, directory } = found;
      plain.push({
        index, known: routed.known, directory,
        opening: {
          thread: {
            owner: user.id, key, project: body.project, title: titleFromDirective(body.text),
            conversation: { agent: routed.known.agent.id, model: routed.route.model, permission_mode: routed.known.offered?.default_permission_mode ?? null, effort: null },
          },
          message_id: body.message_id, text: body.text, directory, lease: deps.lease, origin,
        },
      });
    }
    // A write that failed wrote all of them or none, and which is not known (a time-out after the commit): each is
    // sent the one-by-one way, where an opening that was written finds its key taken and is answered by its
    // `message_id`, and one that was not is written alone.
    const opened = await storage.writer.openThreads(plain.map((p) => p.opening)).catch((): null[] => plain.map(() => null));
    for (const [at, { index, known, directory }] of plain.entries()) {
      const thread = opened[at];
      if (thread === null || thread === undefined) {
        alone.push(index);
        continue;
      }
      const { user, body, origin } = directives[index]!;
      // Sockets waiting on the key (on any instance) are told, and each turn's events announced then its run started,
      // in this order; the answers do not wait for the announcements (nobody waits on a batch's answer to see them).
      void bus.signal({ kind: 'thread_created', owner: user.id, key: thread.thread.key!, thread_id: thread.thread.id }).catch(() => {});
      try {
        void launchTurn(deps, {
          thread: thread.thread, conversation: thread.conversation, agent: known.agent, text: body.text, message_id: body.message_id,
          author: user.id, permission_mode: null, opened: true, when_busy: null, origin,
        }, thread.started, directory);
        answers[index] = ok(thread.started.answer);
      } catch (error) {
        // Stored, but its run could not be started here: as `submit` would, the error is the answer (the lapsed turn is swept).
        answers[index] = { failed: error };
      }
    }
    await eachAtMost(alone, ONE_BY_ONE, async (index) => {
      const { user, key, body, origin } = directives[index]!;
      answers[index] = await deps.submit(user, key, body, origin).catch((error: unknown) => ({ failed: error }));
    });
    return answers;
  };
}

export type OpenThreads = ReturnType<typeof threadOpener>;
