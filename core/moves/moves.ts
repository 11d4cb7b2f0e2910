import type { Failure } from '../../domain/errors.ts';
import { CONSOLE_CHANNEL, type Address, type Agent, type User } from '../../domain/model.ts';
import {
  agentRoutesOn, barredFailure, busyFailure, findPlace, isThreadPlace, movedReason, newThreadAddress, placeAddress, threadOperations, type ChannelAddress, type ThreadOperations,
} from '../../domain/moves.ts';
import { moveNotice } from '../../domain/move-notice.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { channelRoutes, routeNamesAgent } from '../../domain/vocabulary.ts';
import { ChannelUnavailableError, type ChannelPort } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { MoveWrite } from '../../ports/move-writes.ts';
import type { TurnLease } from '../../ports/turn-leases.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { NewId } from '../../ports/new-id.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';
import type { MoveWrites } from '../../ports/move-writes.ts';
import type { QueueEdits } from '../../ports/queue-edits.ts';
import { unavailableFailure, type AgentVocabularies } from '../agents/vocabularies.ts';
import { recentLedger, threadHistory } from '../runs/history.ts';
import type { BackgroundTurns } from '../runs/turns.ts';
import { moveContext } from './context.ts';

type Answer<T> = Promise<Result<T, Failure>>;
/** How many of the newest ledger messages a teleport notice looks through for the last exchange. */
const MOVE_NOTICE_READS = 20;
const invalid = (path: string, message: string): Failure => ({ code: 'validation_failed', errors: [{ path, message }] });

/** A teleport as its body gives it. */
export interface TeleportBody {
  readonly destination: { readonly channel: string; readonly id: string };
  readonly new_thread: boolean;
  readonly prompt: string | null;
}

/** Teleport and summon, and the reads that offer them (spec: ThreadOperations, ChannelAddress). */
export function threadMoves(deps: {
  /** The reads of a move's context and of a thread's history, the queue's length, and the move's write. */
  readonly storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly ledger: LedgerStore; readonly writer: MoveWrites & QueueEdits };
  readonly vocabularies: AgentVocabularies;
  readonly channels: ChannelPort;
  readonly bus: EventBus;
  readonly turns: BackgroundTurns;
  readonly runDirectory: RunDirectory;
  readonly newId: NewId;
  readonly lease: TurnLease;
  /** The dispatcher of the delivery outbox: poked when a move stored a delivery. */
  readonly deliveries: { poke(): void };
}) {
  const { storage, channels } = deps;

  /**
   * Writes a move as one transaction (busy checked inside: 409 and nothing written), publishes its
   * events, and starts its first turn when it has one.
   */
  async function move(user: User, write: MoveWrite, agent: Agent): Answer<{ thread_id: string; conversation_id: string }> {
    const outcome = await storage.writer.writeMove(write);
    if (outcome.kind === 'busy') return fail(busyFailure(outcome.busy) ?? { code: 'turn_running' });
    if (outcome.kind === 'moved_away') return fail({ code: 'conversation_moved', detail: movedReason(outcome.moved_to) });
    if (outcome.kind === 'changed') return fail({ code: 'conversation_changed' });
    if (outcome.kind === 'occupied') return fail({ code: 'destination_occupied' });
    const published = Promise.all(outcome.events.map((event) => deps.bus.publish(event))).catch(() => {});
    // The channel is asked at once; one that is down gets the delivery later from the outbox.
    if (write.delivery !== null) deps.deliveries.poke();
    if (outcome.run !== null && write.turn !== null) {
      const { thread, run } = outcome;
      // A landing thread's worktree was made before its row was: recorded on it now (found made, so at once).
      if (write.landing !== null) await deps.runDirectory(thread);
      // The turn's own message is the newest `message` event the move stored: the history is what came before it.
      const own = outcome.events.filter((event) => event.type === 'message').at(-1)?.data as { message?: { id?: string } } | undefined;
      deps.turns.start({
        threadId: thread.id,
        conversation: outcome.conversation,
        run,
        agent,
        prompt: write.turn.text,
        cwd: write.turn.directory ?? (await deps.runDirectory(thread).then((found) => (found.ok ? found.value : '.'))),
        mode: outcome.conversation.permission_mode,
        history: () => threadHistory(storage, user.id, thread.id, own?.message?.id ?? run.id),
        messageId: own?.message?.id ?? null,
      });
    }
    await published;
    return ok({ thread_id: outcome.thread.id, conversation_id: outcome.conversation.id });
  }

  return {
    async operations(user: User, threadId: string): Answer<ThreadOperations> {
      const context = await moveContext(storage, channels, deps.vocabularies, user, threadId);
      return context.ok ? ok(threadOperations(context.value.input)) : context;
    },

    async addresses(user: User, threadId: string, channelId: string, inside: string | null): Answer<ChannelAddress[]> {
      // The thread's access, then the channels: the listing answers neither its conversations nor its pending items.
      if ((await storage.threads.findRow(user.id, threadId)) === null) return fail({ code: 'thread_unavailable' });
      const channel = (await channels.channels()).find((c) => c.id === channelId);
      if (channel === undefined) return fail({ code: 'channel_not_connected' });
      if (!channel.linked_users.includes(user.id)) return fail({ code: 'channel_not_linked' });
      if (!channel.browsable) return fail({ code: 'channel_not_browsable' });
      if (channel.agents.length === 0) return fail({ code: 'agent_not_on_channel', detail: 'No agent is connected to this channel' });
      let places: Awaited<ReturnType<ChannelPort['places']>>;
      try {
        places = await channels.places(channelId, inside);
      } catch (error) {
        if (error instanceof ChannelUnavailableError) return fail({ code: 'channel_unavailable' });
        throw error;
      }
      if (places === null) return fail(invalid('query.inside', 'opens no place on this channel'));
      return ok(places.map((place) => placeAddress(channel, place)));
    },

    async teleport(user: User, threadId: string, body: TeleportBody): Answer<{ thread_id: string; conversation_id: string }> {
      // The conversation's own agent is checked: waited for only while nothing is known of it. The
      // thread comes first: one the caller cannot use is 404 whatever the body says.
      const context = await moveContext(storage, channels, deps.vocabularies, user, threadId, (id, moving) => id === moving?.agent);
      if (!context.ok) return context;
      const toConsole = body.destination.channel === CONSOLE_CHANNEL;
      if (body.prompt !== null && !toConsole) return fail(invalid('body.prompt', 'is taken only for a console destination'));
      if (!body.new_thread && toConsole) return fail(invalid('body.new_thread', 'must be true for a console destination: it opens a new thread'));
      const { thread, conversation, input } = context.value;
      // A prompt is the landing thread's first directive, and directives are the owner's.
      if (body.prompt !== null && thread.owner !== user.id) return fail({ code: 'not_thread_owner', detail: "Only the thread's owner can send the first message after a move" });
      if (conversation === null) return fail({ code: 'no_conversation', detail: 'The thread has no conversation to move' });
      // Moved away: it moves again from where it is, never from here.
      if (conversation.moved_to !== null) return fail({ code: 'conversation_moved', detail: movedReason(conversation.moved_to) });
      const down = context.value.known.filter((k) => k.agent.id === conversation.agent && k.unavailable !== null);
      if (down.length > 0) return fail(unavailableFailure(down));
      const busy = busyFailure(input.busy);
      if (busy !== null) return fail(busy);
      // The destination is validated again: a listed address was a suggestion, and things change.
      const { channel: channelId, id } = body.destination;
      const channel = context.value.channels.find((c) => c.id === channelId);
      if (channel === undefined) return fail({ code: 'channel_not_connected' });
      const barred = barredFailure(user.id, channel);
      if (barred !== null) return fail(barred);
      if (agentRoutesOn(channel, context.value.offered, conversation.agent).length === 0) {
        return fail({ code: 'agent_not_on_channel', detail: `${conversation.agent} is not connected to this channel` });
      }
      const landingId = deps.newId();
      let address: Address;
      let delivery: Delivery | null = null;
      let where: string;
      if (toConsole) {
        if (id !== 'new') return fail({ code: 'destination_not_offered', detail: 'The console offers one destination: a new console thread' });
        if (thread.channel === CONSOLE_CHANNEL) return fail({ code: 'already_on_console' });
        // A console thread's conversation lives at the thread itself.
        address = { channel: CONSOLE_CHANNEL, id: landingId };
        where = 'a new console thread';
      } else {
        const place = findPlace(channel.addresses, id);
        if (place === null) return fail({ code: 'destination_not_offered' });
        if (place.barred !== null) return fail({ code: 'destination_barred', detail: place.barred });
        if (!body.new_thread && !isThreadPlace(channel.addresses, id)) {
          return fail(invalid('body.new_thread', `must be true for ${place.name}: it is a room, and a room takes new threads only`));
        }
        const deliveryId = deps.newId();
        // People there read a short notice; the agent's brief is the agent's, and is never posted.
        const recent = await recentLedger(storage, user.id, thread.id, MOVE_NOTICE_READS);
        const from = context.value.channels.find((c) => c.id === thread.channel)?.name ?? thread.channel;
        // The address is decided now, from the delivery's id: the move does not wait for the channel.
        address = { channel: channelId, id: body.new_thread ? newThreadAddress(channel, id, deliveryId) : id };
        where = body.new_thread ? `a new thread in ${place.name} on ${channel.name}` : `${place.name} on ${channel.name}`;
        delivery = {
          id: deliveryId, channel: channelId, place: id, new_thread: body.new_thread, address, title: thread.title,
          // A new thread is headed with the title by the platform: the notice does not say it twice.
          text: moveNotice({ mover: user.name, title: thread.title, agent: conversation.agent, from, titled: body.new_thread, newestFirst: recent }),
        };
      }
      // The conversation stays its owner's: a member who moves it lands it in the owner's thread, and follows it there as a member.
      const landing = { id: landingId, owner: thread.owner, members: thread.owner === user.id ? [] : [user.id], channel: channelId, project: thread.project, title: thread.title };
      const moved = { id: deps.newId(), agent: conversation.agent, model: conversation.model, permission_mode: conversation.permission_mode, effort: conversation.effort, address };
      const from = { thread_id: thread.id, conversation_id: conversation.id, channel: thread.channel };
      const to = { thread_id: landing.id, conversation_id: moved.id, channel: channelId, address };
      const agent = context.value.agents.find((a) => a.id === conversation.agent)!;
      // The landing thread is a fork of this one: on a repository project its worktree starts from this thread's branch.
      const located = body.prompt === null ? null : await deps.runDirectory({ id: landing.id, owner: landing.owner, project: thread.project, worktree: null, fork_of: thread.id, fork_cutoff: null });
      if (located !== null && !located.ok) return located;
      return move(user, {
        source_thread_id: thread.id,
        moving: conversation.id,
        replaces: null,
        landing: { ...landing, conversation: moved },
        conversation: moved,
        ledger: `Moved to ${where} (thread ${landing.id})`,
        landing_ledger: `Moved here from ${thread.channel} thread "${thread.title}" (thread ${thread.id})`,
        delivery,
        gateway: { operation: 'teleport', from, to },
        turn: body.prompt === null ? null : { text: body.prompt, directory: located!.value, lease: deps.lease },
      }, agent);
    },

    async summon(user: User, threadId: string, body: { route: string; brief: string; hint: string | null }): Answer<{ conversation_id: string }> {
      // The agent the route names is checked: waited for only while nothing is known of it.
      const context = await moveContext(storage, channels, deps.vocabularies, user, threadId, (id) => routeNamesAgent(body.route, id));
      if (!context.ok) return context;
      const { thread, conversation, input, agents, offered } = context.value;
      if (conversation === null) return fail({ code: 'no_conversation', detail: 'The thread has no conversation to hand over' });
      if (conversation.moved_to !== null) return fail({ code: 'conversation_moved', detail: movedReason(conversation.moved_to) });
      // Routes are what the agents advertise: a model an agent does not offer is no route.
      const known = context.value.channels.flatMap((c) => channelRoutes(c, offered)).some((r) => r.id === body.route);
      const down = context.value.known.filter((k) => k.unavailable !== null && routeNamesAgent(body.route, k.agent.id));
      if (!known && down.length > 0) return fail(unavailableFailure(down));
      if (!known) return fail(invalid('body.route', 'is not a route of any connected channel'));
      const offer = threadOperations(input);
      const busy = busyFailure(input.busy);
      if (busy !== null) return fail(busy);
      const route = Object.values(offer.summon.routes).flat().find((r) => r.id === body.route);
      if (route === undefined) return fail({ code: 'route_not_offered', detail: `${body.route} is not offered here: summon hands over to another agent on this channel` });
      const agent = agents.find((a) => a.id === route.agent)!;
      const posture = offered.find((a) => a.id === route.agent)!.default_permission_mode;
      const next = { id: deps.newId(), agent: agent.id, model: route.model, permission_mode: posture, effort: null, address: conversation.address };
      // The brief is what the new agent starts from: its first turn, in place, written with the hand-over.
      const located = await deps.runDirectory(thread);
      if (!located.ok) return located;
      const moved = await move(user, {
        source_thread_id: thread.id,
        moving: null,
        // The conversation this summon read as the latest: checked again inside, where the busy check is.
        replaces: conversation.id,
        landing: null,
        conversation: next,
        ledger: `Handed over to ${route.id}${body.hint === null ? '' : `: ${body.hint}`}`,
        landing_ledger: null,
        delivery: null,
        gateway: {
          operation: 'summon',
          from: { conversation_id: conversation.id, agent: conversation.agent },
          to: { conversation_id: next.id, route: route.id },
          hint: body.hint,
        },
        turn: { text: body.brief, directory: located.value, lease: deps.lease },
      }, agent);
      return moved.ok ? ok({ conversation_id: moved.value.conversation_id }) : moved;
    },
  };
}

export type ThreadMoves = ReturnType<typeof threadMoves>;
