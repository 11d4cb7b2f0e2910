import type { Failure } from '../../domain/errors.ts';
import type { Result } from '../../domain/result.ts';
import * as v from 'valibot';
import { json, result, type Reply } from '../http/reply.ts';
import { AgentPostures, answer, ChannelInfo, Conversation, LedgerMessage, ModelMessage, Page, Pending, RouteInfo, Run, Thread, ThreadListItem } from '../http/response-schemas.ts';
import { route, type Route } from '../http/route.ts';
import type { ConsoleReads } from '../../core/reads/console-reads.ts';
import { ConversationParams, PageQuery, RunParams, ThreadListQuery, ThreadParams } from './schemas.ts';

const P = '/api/console';

/** Maps a read's result: the value as JSON, or the failure as problem+json. */
const ok200 = <T>(outcome: Result<T, Failure>): Reply => result(200, outcome);
const page = (query: { limit: number; before?: string }) => ({ limit: query.limit, before: query.before ?? null });

const UNDER_THREAD = { 401: 'No valid credential', 404: 'Thread unavailable', 422: 'A path id or the query is not valid' };
const ANON = { 401: 'No valid credential' };

/** The console's GET routes (contract section 4). Every one needs a user. */
export function consoleReadRoutes(reads: ConsoleReads): Route[] {
  return [
    route({ method: 'GET', path: `${P}/routes`, summary: 'Routes a directive may name ([RouteInfo])', auth: true, operationId: 'listRoutes',
      responses: { 200: answer('The routes of the console channel', v.array(RouteInfo)), ...ANON },
      handle: async () => json(200, await reads.routes()) }),
    route({ method: 'GET', path: `${P}/channels`, summary: 'Channels linked to the caller', auth: true, operationId: 'listChannels',
      responses: { 200: answer('The channels', v.array(ChannelInfo)), ...ANON },
      handle: async ({ user }) => json(200, await reads.channels(user)) }),
    route({ method: 'GET', path: `${P}/projects`, summary: 'Project names a directive may pick', auth: true, operationId: 'listProjects',
      responses: { 200: answer('Project names', v.array(v.string())), ...ANON },
      handle: async () => json(200, await reads.projects()) }),
    route({ method: 'GET', path: `${P}/permissions`, summary: 'Approval postures and efforts per agent ([AgentPostures])', auth: true, operationId: 'listPermissions',
      responses: {
        200: answer('For each agent of a channel linked to the caller, the modes and effort levels it offers (narrowed by the world), its default mode, and null; an unavailable agent has empty lists, a null default and the reason', v.array(AgentPostures)),
        401: 'No valid credential',
      },
      handle: async ({ user }) => json(200, await reads.permissions(user)) }),
    route({ method: 'GET', path: `${P}/threads`, operationId: 'listThreads', auth: true, query: ThreadListQuery,
      summary: 'Page of the threads the caller can access, newest first: those not archived, or with `archived=true` the archived ones only; with `q`, those whose title or own ledger holds every word (each the beginning of a word, in any case)',
      responses: { 200: answer('Page of threads, each with its activity: a turn running, approvals and questions waiting, directives queued', Page(ThreadListItem)), 401: 'No valid credential', 422: 'Bad limit, cursor, archived or q (over 200 characters or 10 words, or a NUL)' },
      handle: async ({ user, query }) => json(200, await reads.threads(user, page(query), { archived: query.archived, q: query.q ?? null })) }),
    route({ method: 'GET', path: `${P}/threads/:id`, summary: 'The thread row, without messages', auth: true, operationId: 'getThread',
      params: ThreadParams, responses: { 200: answer('The thread row', Thread), ...UNDER_THREAD },
      handle: ({ user, params }) => reads.thread(user, params.id).then(ok200) }),
    route({ method: 'GET', path: `${P}/threads/:id/messages`, summary: 'Page of the chat ledger, newest first (a fork sees its parent up to the cutoff)', operationId: 'listMessages',
      auth: true, params: ThreadParams, query: PageQuery, responses: { 200: answer('Page of ledger messages', Page(LedgerMessage)), ...UNDER_THREAD },
      handle: ({ user, params, query }) => reads.messages(user, params.id, page(query)).then(ok200) }),
    route({ method: 'GET', path: `${P}/threads/:id/conversations`, summary: "The thread's conversations", auth: true, operationId: 'listConversations',
      params: ThreadParams, responses: { 200: answer('The conversations, oldest first', v.array(Conversation)), ...UNDER_THREAD },
      handle: async ({ user, params }) => ok200(await reads.conversations(user, params.id)) }),
    route({ method: 'GET', path: `${P}/threads/:id/conversations/:cid/runs`, summary: "Page of a conversation's runs, newest first", operationId: 'listRuns',
      auth: true, params: ConversationParams, query: PageQuery,
      responses: { 200: answer('Page of runs', Page(Run)), ...UNDER_THREAD, 404: 'Thread or conversation unavailable' },
      handle: async ({ user, params, query }) => ok200(await reads.runs(user, params.id, params.cid, page(query))) }),
    route({ method: 'GET', path: `${P}/threads/:id/runs/:rid/messages`, summary: "Page of a run's model messages, newest first", operationId: 'listModelMessages',
      auth: true, params: RunParams, query: PageQuery, responses: { 200: answer('Page of model messages', Page(ModelMessage)), ...UNDER_THREAD, 404: 'Thread or run unavailable' },
      handle: async ({ user, params, query }) => ok200(await reads.modelMessages(user, params.id, params.rid, page(query))) }),
    route({ method: 'GET', path: `${P}/threads/:id/pending`, summary: 'Approvals and questions pending on the thread', auth: true, operationId: 'listPending',
      params: ThreadParams, responses: { 200: answer('Pending items, oldest first', v.array(Pending)), ...UNDER_THREAD },
      handle: async ({ user, params }) => ok200(await reads.pending(user, params.id)) }),
  ];
}
