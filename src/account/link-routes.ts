import * as v from 'valibot';
import type { ChannelLinking } from '../../core/channels/links.ts';
import { storable } from '../console-api/schemas.ts';
import { answer, ChannelLink, LinkableChannel, LinkCode } from '../http/response-schemas.ts';
import { empty, json, problem, result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';

/** Link codes one user may ask for per minute, on each instance. */
export const LINK_CODES_PER_MINUTE = 5;

const P = '/api/account/links';
const ChannelId = v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'), storable);
/** Codes and links are the caller's own: never kept by a cache. */
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * The caller's links to chat addresses (contract section 9, "Linking"): ask for a one-use code for a
 * chat channel (the code is in this answer only: it is never stored nor logged), list the links, remove one.
 */
export function linkRoutes(linking: ChannelLinking, codes: WindowLimiter): Route[] {
  return [
    route({
      method: 'POST',
      path: P,
      summary: 'A one-use code (10 minutes) that links the address it is sent from, as `link <code>` to the channel\'s bot, to the caller',
      operationId: 'createLinkCode',
      auth: true,
      body: v.object({ channel: ChannelId }),
      responses: {
        201: answer('The code, shown once, and what to send the bot in a direct message', LinkCode),
        401: 'No valid credential',
        422: 'Not a channel (`validation_failed`), or the console channel (`channel_not_linkable`)',
        429: 'Too many codes asked for this minute (Retry-After)',
      },
      handle: async ({ user, body }) => {
        const wait = codes.blocked(user.id);
        if (wait !== null) return problem({ code: 'too_many_link_codes' }, { 'retry-after': String(wait) });
        codes.record(user.id);
        const made = await linking.linkCode(user, body.channel);
        return made.ok ? json(201, made.value, NO_STORE) : problem(made.error);
      },
    }),
    route({
      method: 'GET',
      path: P,
      summary: "The caller's links to chat addresses, by channel",
      operationId: 'listLinks',
      auth: true,
      responses: { 200: answer("The caller's links", v.array(ChannelLink)), 401: 'No valid credential' },
      handle: async ({ user }) => json(200, await linking.links(user), NO_STORE),
    }),
    route({
      method: 'DELETE',
      path: `${P}/:channel`,
      summary: "Remove the caller's link (made with a code) on a channel",
      operationId: 'removeLink',
      auth: true,
      params: v.object({ channel: ChannelId }),
      responses: { 204: 'Removed: messages from that address are no longer the caller\'s', 401: 'No valid credential', 404: 'No link made with a code on this channel (`link_not_found`)' },
      handle: async ({ user, params }) => {
        const removed = await linking.unlink(user, params.channel);
        return removed.ok ? empty(204) : problem(removed.error);
      },
    }),
    route({
      method: 'GET',
      path: '/api/account/link-channels',
      summary: 'The channels the caller can link an address on: every connected channel but the console',
      operationId: 'listLinkableChannels',
      auth: true,
      responses: { 200: answer('The linkable channels', v.array(LinkableChannel)), 401: 'No valid credential' },
      handle: async () => result(200, { ok: true, value: await linking.linkableChannels() }),
    }),
  ];
}
