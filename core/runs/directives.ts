import type { Failure } from '../../domain/errors.ts';
import { CONSOLE_CHANNEL, type Agent, type Conversation, type DirectiveOrigin, type Thread, type User } from '../../domain/model.ts';
import { movedReason } from '../../domain/moves.ts';
import { fail, ok, type Issue, type Result } from '../../domain/result.ts';
import { titleFromDirective } from '../../domain/thread-title.ts';
import { channelRoutes, findRoute, isEffortOf, isPostureOf, routeId, routeNamesAgent, type RouteInfo } from '../../domain/vocabulary.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ConsoleThreads, NewConsoleThread } from '../../ports/console-threads.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { DirectiveAnswer, DirectiveWrites, StartedOutcome } from '../../ports/directive-writes.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';
import type { TurnLease, TurnLeases } from '../../ports/turn-leases.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import { offeredOnly, unavailableFailure, type AgentVocabularies, type KnownAgent, type WaitFor } from '../agents/vocabularies.ts';
import { forkableSession, type ForkSessionStores } from '../forks/fork-session.ts';
import { FORK_BRIEFED, threadHistory } from './history.ts';
import { turnSteerer } from './steer.ts';
import type { DeliverSteer } from './steer-delivery.ts';
import type { BackgroundTurns } from './turns.ts';

/** A directive as its body gives it (DirectiveBody). */
export interface Directive {
  readonly text: string;
  readonly message_id: string | null;
  readonly model: string | null;
  readonly project: string | null;
  readonly permission_mode: string | null;
  readonly effort: string | null;
  /** What to do when the thread is busy (contract section 7): absent or null is `reject`. */
  readonly when_busy?: WhenBusy | null;
}

/**
 * How a directive meets a busy thread: refused (409), queued, run next after cancelling the running turn, or
 * sent into the running turn where its agent steers, else queued (contract section 11).
 */
export type WhenBusy = 'reject' | 'queue' | 'interrupt' | 'steer';

/** What a turn's start writes (the directive), and reads for a fresh session's brief (the thread's history). */
export interface TurnStores extends ForkSessionStores {
  readonly threads: ThreadStore;
  readonly ledger: LedgerStore;
  readonly writer: DirectiveWrites & ForkSessionStores['writer'];
}

const invalid = (path: string, message: string): Failure => ({ code: 'validation_failed', errors: [{ path, message }] });

/**
 * The directive use case (contract section 4): a new console thread by the caller's key, or an
 * owned console thread by row id; vocabularies checked; model, project and effort honoured on the
 * first directive only; the posture stored before the run; idempotent by `message_id`; answered
 * as soon as the turn is on its way.
 */
export function directives(deps: {
  /** A turn's stores, and the catalog, the thread's conversations, its console thread by key and its running turn. */
  readonly storage: TurnStores & { readonly catalog: Catalog; readonly conversations: ConversationStore; readonly writer: ConsoleThreads & Pick<TurnLeases, 'runningTurn'> };
  readonly vocabularies: AgentVocabularies;
  readonly bus: EventBus;
  readonly turns: BackgroundTurns;
  readonly runDirectory: RunDirectory;
  readonly lease: TurnLease;
  /** Sends a steer to the running turn, wherever it runs (`when_busy: "steer"`). */
  readonly deliverSteer: DeliverSteer;
}) {
  const { storage, bus } = deps;
  const startTurn = turnStarter(deps);
  const steer = turnSteerer({ writer: storage.writer, bus, deliver: deps.deliverSteer, startTurn });

  /**
   * The console thread a directive names by row id or key, with its routed conversation; null for a
   * new key. Owned, unless `member` (a directive that queues: members may queue, contract section 7).
   */
  async function existing(user: User, ref: string, member: boolean): Promise<Result<{ thread: Thread; conversation: Conversation } | null, Failure>> {
    // A ref is mostly a row id: its latest conversation is read with the row, in one statement (none when the
    // user cannot read the row).
    const byRow = await storage.threads.findRowWithLatest(user.id, ref);
    const found = byRow?.row ?? (await storage.writer.findByKey(user.id, ref));
    // Another user's row id is that thread's, not a key of the caller's: 404, as every path id of someone else's.
    if (found === null) return (await storage.threads.exists(ref)) ? fail({ code: 'thread_unavailable' }) : ok(null);
    if (found.owner !== user.id && !member) return fail({ code: 'not_thread_owner' });
    if (found.channel !== CONSOLE_CHANNEL) return fail({ code: 'not_console_thread' });
    // The latest conversation is the one that speaks: a summon adds the new agent's after the old.
    const conversation = byRow !== null ? byRow.latest : await storage.conversations.latestByThread(found.id);
    if (conversation === null) return fail({ code: 'no_conversation', detail: 'The thread has no conversation to continue' });
    // A conversation teleported away is continued where it is now: the answer names it.
    if (conversation.moved_to !== null) return fail({ code: 'conversation_moved', detail: movedReason(conversation.moved_to) });
    return ok({ thread: found, conversation });
  }

  /** Writes a new console thread, and tells sockets waiting on its key (on any instance) that it exists. */
  async function createThread(thread: NewConsoleThread) {
    const created = await storage.writer.createConsoleThread(thread);
    await bus.signal({ kind: 'thread_created', owner: thread.owner, key: thread.key, thread_id: created.thread.id });
    return created;
  }

  const consoleRoutes = (wait: WaitFor) => consoleRoutesOf(storage.catalog, deps.vocabularies, wait);

  /**
   * `origin` is the schedule or hook that sends it, given by the use case that does (core/automation), never by a
   * request body: the directive route passes none, so a person's directive is stored with null.
   */
  return async function submit(user: User, ref: string, body: Directive, origin: DirectiveOrigin | null = null): Promise<Result<DirectiveAnswer, Failure>> {
    // The thread first: one the caller cannot use answers 404 (or its refusal) whatever the body names.
    const whenBusy = body.when_busy === 'reject' ? null : body.when_busy ?? null;
    // The agents are read beside the thread (one round trip, not two): a continued thread's agent is looked up in them.
    const agents = storage.catalog.agents();
    agents.catch(() => {});
    const found = await existing(user, ref, whenBusy !== null);
    if (!found.ok) return found;
    const issues: Issue[] = [];
    let offered: { routes: RouteInfo[]; known: KnownAgent[] } | null = null;
    let route: RouteInfo | null = null;
    if (body.model !== null) {
      const model = body.model;
      // Only the agent the route names is waited for, and only while nothing is known of it.
      offered = await consoleRoutes((id) => routeNamesAgent(model, id));
      route = findRoute(offered.routes, model);
      const down = offered.known.filter((k) => k.unavailable !== null && routeNamesAgent(model, k.agent.id));
      if (route === null && down.length > 0) return fail(unavailableFailure(down));
      if (route === null) issues.push({ path: 'body.model', message: 'is not a route of GET /routes' });
    }
    if (body.project !== null && !(await storage.catalog.projects()).includes(body.project)) {
      issues.push({ path: 'body.project', message: 'is not a project of GET /projects' });
    }
    if (issues.length > 0) return fail({ code: 'validation_failed', errors: issues });

    let known: KnownAgent | null;
    if (found.value === null) {
      // A new thread without a model takes the first route offered.
      offered ??= await consoleRoutes(() => true);
      route ??= offered.routes[0] ?? null;
      const id = route?.agent;
      known = offered.known.find((candidate) => candidate.agent.id === id) ?? null;
      const down = offered.known.filter((k) => k.unavailable !== null);
      if (known === null && down.length > 0) return fail(unavailableFailure(down, 'No agent is offered for this thread: '));
    } else {
      // A directive that picks nothing to check runs on what the thread has: it never waits on the agent's offer.
      known = await deps.vocabularies.one(found.value.conversation.agent, body.permission_mode !== null || body.effort !== null, agents);
    }
    if (known === null) return fail({ code: 'no_agent_offered' });
    const { agent } = known;
    if (found.value !== null && body.model !== null) {
      const current = routeId(found.value.conversation.agent, found.value.conversation.model);
      if (body.model !== current) return fail({ code: 'reroute_refused', detail: `The thread is routed to ${current}; re-routing needs a manual handoff` });
    }
    // Checked against what the agent advertises: a pick it does not offer never reaches a run.
    if ((body.permission_mode !== null || body.effort !== null) && known.unavailable !== null) return fail(unavailableFailure([known]));
    const unsaid = known.offered === null ? ` (nothing is known yet of what ${agent.id} offers)` : '';
    if (body.permission_mode !== null && (known.offered === null || !isPostureOf(known.offered, body.permission_mode))) {
      return fail(invalid('body.permission_mode', `is not a permission mode of ${agent.id}${unsaid}`));
    }
    if (body.effort !== null && (known.offered === null || !isEffortOf(known.offered, body.effort))) {
      return fail(invalid('body.effort', `is not an effort of ${agent.id}${unsaid}`));
    }

    // Model, project and effort count on the first directive only: they are written with the thread.
    const { thread, conversation } =
      found.value ??
      (await createThread({
        owner: user.id,
        key: ref,
        project: body.project,
        title: titleFromDirective(body.text),
        conversation: {
          agent: agent.id,
          model: route?.model ?? null,
          permission_mode: body.permission_mode ?? known.offered?.default_permission_mode ?? null,
          effort: body.effort,
        },
      }));

    // Two first directives for one key can race: the loser continues the winner's thread, so its picks are checked again.
    if (found.value === null) {
      const differs = racedPick(body, thread, conversation);
      if (differs !== null) return fail(differs);
    }
    const turn: TurnStart = {
      thread, conversation, agent, text: body.text, message_id: body.message_id, author: user.id, permission_mode: body.permission_mode, opened: found.value === null,
      when_busy: whenBusy === null || whenBusy === 'steer' ? null : { mode: whenBusy, author: user.id },
      origin,
    };
    return whenBusy === 'steer' ? steer(turn) : startTurn(turn);
  };
}

/** The console channel's routes, from what its agents advertise; `wait` names those a check needs (see AgentVocabularies). */
export async function consoleRoutesOf(catalog: Pick<Catalog, 'channels'>, vocabularies: AgentVocabularies, wait: WaitFor): Promise<{ routes: RouteInfo[]; known: KnownAgent[] }> {
  const console = (await catalog.channels()).find((channel) => channel.id === CONSOLE_CHANNEL);
  if (console === undefined) return { routes: [], known: [] };
  const known = await vocabularies.all(console.agents, wait);
  return { routes: channelRoutes(console, offeredOnly(known)), known };
}

/**
 * What a first directive asked for that the thread (written by a concurrent first directive for the
 * same key) does not have: the 409's failure, or null when every pick it made matches.
 */
function racedPick(body: Directive, thread: Thread, conversation: Conversation): Failure | null {
  const route = routeId(conversation.agent, conversation.model);
  const raced = (detail: string): Failure => ({ code: 'first_directive_raced', detail });
  if (body.model !== null && body.model !== route) return { code: 'reroute_refused', detail: `The thread is routed to ${route}; re-routing needs a manual handoff` };
  if (body.project !== null && body.project !== thread.project) return raced(`The thread was just created in project ${thread.project ?? 'none'}`);
  if (body.permission_mode !== null && body.permission_mode !== conversation.permission_mode) {
    return raced(`The thread was just created with permission mode ${conversation.permission_mode ?? 'none'}; switch it with PATCH`);
  }
  if (body.effort !== null && body.effort !== conversation.effort) return raced(`The thread was just created with effort ${conversation.effort ?? 'none'}`);
  return null;
}

/** A turn to start on a conversation: the user's text, and the posture to store first (null: keep). */
export interface TurnStart {
  readonly thread: Thread;
  readonly conversation: Conversation;
  readonly agent: Agent;
  readonly text: string;
  readonly message_id: string | null;
  /** The user who sent it: its `message_id` is theirs alone on the thread. */
  readonly author: string;
  readonly permission_mode: string | null;
  /** The directive opened the thread: it has no past, so no history brief is ever read for its turn. */
  readonly opened: boolean;
  /** Queue it (or interrupt) when the thread is busy, as `author`; null refuses it then. */
  readonly when_busy?: { readonly mode: 'queue' | 'interrupt'; readonly author: string } | null;
  /** The schedule or hook that sent it (stored on its ledger message); absent or null: a person's. */
  readonly origin?: DirectiveOrigin | null;
}

/**
 * Writes a turn (posture, the user's ledger message, a running run under this instance's lease,
 * the directive's answer and its `message` event, all in one transaction), publishes the event,
 * and starts the run: shared by directives and by a summon's brief. Idempotent by `message_id`; a
 * thread with a turn running is a conflict, unless the turn asks to queue (or interrupt): then it is
 * stored in the thread's queue, and runs when a turn's end hands the thread over.
 */
export function turnStarter(deps: { readonly storage: TurnStores; readonly bus: EventBus; readonly turns: BackgroundTurns; readonly runDirectory: RunDirectory; readonly lease: TurnLease }) {
  const { storage, bus } = deps;
  return async function startTurn(turn: TurnStart): Promise<Result<DirectiveAnswer, Failure>> {
    const { thread, conversation } = turn;
    const located = await deps.runDirectory(thread);
    if (!located.ok) return located;
    const directory = located.value;
    const outcome = await storage.writer.writeDirective({
      thread_id: thread.id,
      conversation_id: conversation.id,
      message_id: turn.message_id,
      author: turn.author,
      text: turn.text,
      directory,
      permission_mode: turn.permission_mode,
      lease: deps.lease,
      when_busy: turn.when_busy ?? null,
      origin: turn.origin ?? null,
    });
    if (outcome.kind === 'repeated') return ok(outcome.answer);
    if (outcome.kind === 'message_id_taken') return fail({ code: 'message_id_taken' });
    if (outcome.kind === 'busy') return fail({ code: 'turn_running' });
    if (outcome.kind === 'queue_not_empty') return fail({ code: 'queue_not_empty' });
    if (outcome.kind === 'queue_full') return fail({ code: 'queue_full' });
    if (outcome.kind === 'queued') {
      await bus.publish(outcome.event).catch(() => {});
      // An interrupt cancels the running turn as POST /cancel does, wherever it runs; its end hands the thread to this one.
      if (outcome.interrupts !== null) await bus.signal({ kind: 'cancel_requested', run_id: outcome.interrupts });
      return ok(outcome.answer);
    }
    if (outcome.kind === 'moved_away') return fail({ code: 'conversation_moved', detail: movedReason(outcome.moved_to) });
    // A summon replaced the conversation after it was read here: the directive was meant for the other agent.
    if (outcome.kind === 'changed') return fail({ code: 'conversation_changed' });
    await launchTurn(deps, turn, outcome, directory);
    return ok(outcome.answer);
  };
}

/**
 * A turn written and started (`writeDirective`'s `started`) set going: its events published, in order (this
 * instance's sockets get them at once, before anything the agent does), and its run started whatever the bus does (a
 * lost announcement is filled from the log). Answers once the run is started (a failure to start it is thrown), with
 * a promise of the announcements, which never rejects.
 */
export function launchTurn(
  deps: { readonly storage: TurnStores; readonly bus: EventBus; readonly turns: BackgroundTurns },
  turn: TurnStart,
  outcome: StartedOutcome,
  directory: string,
): Promise<void> {
  const { storage, bus, turns } = deps;
  const { thread, conversation } = turn;
  const published = Promise.all([bus.publish(outcome.event), bus.publish(outcome.runStarted)]).then(() => {}, () => {});
  turns.start({
    threadId: thread.id,
    conversation,
    run: outcome.run,
    agent: turn.agent,
    prompt: turn.text,
    cwd: directory,
    mode: turn.permission_mode ?? conversation.permission_mode,
    started: { sessionId: outcome.sessionId },
    messageId: outcome.message.id,
    ...(turn.opened ? {} : { history: () => threadHistory(storage, thread.owner, thread.id, outcome.message.id) }),
    // A fork's conversation has no session yet: its first brief is no failure to continue one.
    // Its agent may fork the source's session instead, where that is where the fork starts from.
    ...(thread.fork_of !== null && outcome.sessionId === null
      ? { briefedNote: FORK_BRIEFED, forkFrom: () => forkableSession(storage, thread.owner, thread.id, conversation.agent) }
      : {}),
  });
  return published;
}
