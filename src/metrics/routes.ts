import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { problem, type Reply } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { GuessLimit } from '../identity/guess-limit.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * `GET /metrics` (contract section 1): Prometheus text to `Authorization: Bearer <METRICS_TOKEN>`, 401
 * otherwise. Only built when the token is set (else the path is 404), and only on the console origin
 * (the sandbox origin answers its two paths alone). Tokens are compared as digests in constant time;
 * a wrong one counts against its client's budget of failed credentials (`guesses`).
 */
export function metricsRoute(registry: Registry, token: string, guesses: GuessLimit): Route {
  const expected = digest(`Bearer ${token}`);
  return route({
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics of this instance (only when METRICS_TOKEN is set; Authorization: Bearer <METRICS_TOKEN>)',
    operationId: 'metrics',
    responses: { 200: { description: 'Prometheus text', mediaType: 'text/plain' }, 401: 'No or a wrong token', 429: 'Too many failed credentials from this client this minute (Retry-After)' },
    handle: async ({ ctx }): Promise<Reply> => {
      const given = ctx.req.headers.authorization;
      // No token at all is no guess; a wrong one counts against its client, as any credential does.
      if (typeof given !== 'string') return problem({ code: 'unauthenticated' }, { 'www-authenticate': 'Bearer', 'cache-control': 'no-store' });
      const found = await guesses(ctx, async () => (timingSafeEqual(digest(given), expected) ? true : null));
      if (!found.ok) return found.error;
      if (found.value === null) return problem({ code: 'unauthenticated' }, { 'www-authenticate': 'Bearer', 'cache-control': 'no-store' });
      return { status: 200, headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' }, body: await registry.metrics() };
    },
  });
}
