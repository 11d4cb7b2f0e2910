import * as v from 'valibot';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { ThreadMoves } from '../../core/moves/moves.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';
import { answer, ChannelAddress, Summoned, Teleported, ThreadOperations } from '../http/response-schemas.ts';
import type { User } from '../../domain/model.ts';

const P = '/api/console/threads/:id';
const word = (max: number) => v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(max, `must be at most ${max} characters`), storable);
const text = (max: number) => v.pipe(v.string('must be a string'), v.check((t) => t.trim() !== '', 'must not be blank'), v.maxLength(max, `must be at most ${max} characters`), storable);

const TeleportBody = v.object({
  destination: v.object({ channel: word(200), id: word(500) }, 'must be {"channel", "id"}'),
  new_thread: v.optional(v.boolean('must be true or false'), true),
  prompt: v.optional(v.nullable(text(100_000)), null),
});
const SummonBody = v.object({
  route: word(200),
  brief: text(100_000),
  hint: v.optional(v.nullable(v.pipe(v.string('must be a string'), v.maxLength(2000, 'must be at most 2000 characters'), storable)), null),
});
const MOVE_ANSWERS = { 401: 'No valid credential', 404: 'Thread unavailable', 409: 'Refused, with the reason as detail', 422: 'A body that is not valid' };

/** Teleport and summon, and the reads that offer them; `access` answers 404 first when a body or query is refused. */
export function operationRoutes(moves: ThreadMoves, access: PathAccesses): Route[] {
  const threadFirst = ({ user, params }: { user: User; params: { id: string } }) => access.thread(user, params.id);
  return [
    route({
      method: 'GET', path: `${P}/operations`, summary: 'What teleport and summon can do for the thread now (ThreadOperations)', auth: true,
      params: v.object({ id: UuidParam }), operationId: 'threadOperations',
      responses: { 200: answer('ThreadOperations', ThreadOperations), 401: 'No valid credential', 404: 'Thread unavailable' },
      handle: async ({ user, params }) => {
        return result(200, await moves.operations(user, params.id));
      },
    }),
    route({
      method: 'GET', path: `${P}/channels/:channel/addresses`, summary: "One level of a channel's destinations ([ChannelAddress])", auth: true,
      params: v.object({ id: UuidParam, channel: word(200) }),
      query: v.object({ inside: v.optional(v.pipe(v.string('must be given once'), v.nonEmpty('must not be empty'), v.maxLength(500), storable)) }),
      operationId: 'channelAddresses', pathRefusal: threadFirst,
      responses: { 200: answer('One level of places', v.array(ChannelAddress)), 401: 'No valid credential', 404: 'Thread unavailable', 409: 'Not browsable, no agent, or not linked', 422: 'An inside value that opens nothing', 503: "The channel's platform cannot be reached now (channel_unavailable)" },
      handle: async ({ user, params, query }) => {
        return result(200, await moves.addresses(user, params.id, params.channel, query.inside ?? null));
      },
    }),
    route({
      method: 'POST', path: `${P}/teleport`, summary: 'Move the conversation to a destination on a connected channel', auth: true,
      params: v.object({ id: UuidParam }), body: TeleportBody, operationId: 'teleport', pathRefusal: threadFirst,
      responses: { 202: answer('Moved', Teleported), ...MOVE_ANSWERS },
      handle: async ({ user, params, body }) => {
        return result(202, await moves.teleport(user, params.id, body));
      },
    }),
    route({
      method: 'POST', path: `${P}/summon`, summary: 'Hand the conversation to another agent and model where it is', auth: true,
      params: v.object({ id: UuidParam }), body: SummonBody, operationId: 'summon', pathRefusal: threadFirst,
      responses: { 202: answer('Handed over', Summoned), ...MOVE_ANSWERS },
      handle: async ({ user, params, body }) => {
        return result(202, await moves.summon(user, params.id, body));
      },
    }),
  ];
}
