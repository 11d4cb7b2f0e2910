import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { SANDBOX_PAGE_PATH, SANDBOX_SCRIPT_PATH, sandboxUrl } from '../../domain/sandbox-policy.ts';
import { answerCache } from '../../src/http/answer-cache.ts';
import type { RequestContext } from '../../src/http/context.ts';
import { json, type Reply } from '../../src/http/reply.ts';
import { route, runRoute, type Route } from '../../src/http/route.ts';
import { buildSurface } from '../../src/http/surface.ts';
import { sandboxSurface } from '../../src/sandbox/routes.ts';

/** A request context as the edge makes one, for the parts a route reads. */
function contextFor(target: string, host = 'sandbox.localhost:8080'): RequestContext {
  const mark = target.indexOf('?');
  const search = mark === -1 ? null : target.slice(mark + 1);
  return {
    req: { headers: { host } },
    id: 'test',
    log: undefined,
    method: 'GET',
    path: mark === -1 ? target : target.slice(0, mark),
    search,
    query: new URLSearchParams(search ?? ''),
    scheme: 'http',
    host,
    origin: { scheme: 'http', host: host.split(':')[0]!, port: Number(host.split(':')[1] ?? 80) },
    route: null,
  } as unknown as RequestContext;
}

const noAuth = async () => {
  throw new Error('no route here authenticates');
};

describe('routes that wait on nothing, and kept answers', () => {
  it('a route without auth or body answers at once, not with a promise, and a throw is thrown', () => {
    const sync = route({ method: 'GET', path: '/s', summary: 's', query: v.object({ n: v.string() }), handle: ({ query }) => json(200, query) });
    const answer = runRoute(sync, contextFor('/s?n=1'), {}, noAuth);
    assert.ok(!(answer instanceof Promise));
    assert.equal((answer as Reply).status, 200);
    const refused = runRoute(sync, contextFor('/s'), {}, noAuth);
    assert.ok(!(refused instanceof Promise));
    assert.equal((refused as Reply).status, 422);
    const boom = route({ method: 'GET', path: '/b', summary: 'b', handle: () => { throw new Error('bug'); } });
    assert.throws(() => runRoute(boom, contextFor('/b'), {}, noAuth), /bug/);
  });

  it('a kept answer is the first one, frozen, answered at once without the handler; other keys and refusals are not kept', () => {
    let made = 0;
    const kept = route({
      method: 'GET',
      path: '/k',
      summary: 'k',
      query: v.object({ q: v.string() }),
      memo: { key: (ctx) => ctx.search, keep: (reply) => reply.status === 200, cache: answerCache<Reply>(4) },
      handle: ({ query }) => (made++, json(200, { q: query.q })),
    });
    const first = runRoute(kept, contextFor('/k?q=a'), {}, noAuth) as Reply;
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.headers));
    const again = runRoute(kept, contextFor('/k?q=a'), {}, noAuth);
    assert.equal(again, first);
    assert.equal(made, 1);
    runRoute(kept, contextFor('/k?q=b'), {}, noAuth);
    assert.equal(made, 2);
    // A refusal (no q) is answered afresh each time: never kept.
    const refusedOnce = runRoute(kept, contextFor('/k?x=1'), {}, noAuth) as Reply;
    assert.equal(refusedOnce.status, 422);
    assert.notEqual(runRoute(kept, contextFor('/k?x=1'), {}, noAuth), refusedOnce);
  });

  it('a memo is refused on a route with auth or a body: a kept answer would skip them', () => {
    const memo = { key: () => 'k', keep: () => true, cache: answerCache<Reply>(1) };
    const withAuth = route({ method: 'GET', path: '/a', summary: 'a', auth: true, memo, handle: () => json(200, {}) });
    const withBody = route({ method: 'POST', path: '/p', summary: 'p', body: v.object({}), memo, handle: () => json(200, {}) });
    for (const r of [withAuth, withBody] as Route[]) {
      assert.throws(() => buildSurface({ name: 'x', owns: () => true, guards: [], routes: [r] }), /memo/);
    }
  });

  it('the sandbox page is kept by its query and origin, answered at once; the script is one frozen answer', () => {
    const surface = sandboxSurface();
    const page = surface.routes.find((r) => r.path === SANDBOX_PAGE_PATH)!;
    const script = surface.routes.find((r) => r.path === SANDBOX_SCRIPT_PATH)!;
    assert.ok(page.memo !== undefined, 'the page is kept');
    const url = new URL(sandboxUrl('http://sandbox.localhost:8080', { parentOrigin: 'http://localhost:8080', csp: { resourceDomains: [], connectDomains: [], frameDomains: [], baseUriDomains: [] } }));
    const target = url.pathname + url.search;
    const first = runRoute(page, contextFor(target), {}, noAuth) as Reply;
    assert.equal(first.status, 200);
    assert.equal(runRoute(page, contextFor(target), {}, noAuth), first);
    // The kept answer is the very answer the handler makes afresh: status, headers and bytes.
    const made = page.handle({ query: { policy: url.searchParams.get('policy') }, body: undefined, params: {}, ctx: contextFor(target), user: undefined as never, caller: undefined }) as Reply;
    assert.equal(made.status, first.status);
    assert.deepEqual({ ...made.headers }, { ...first.headers });
    assert.ok(Buffer.from(made.body as Uint8Array).equals(Buffer.from(first.body as Uint8Array)));
    assert.ok(!Object.isFrozen(made));
    // Another origin asking the same query is another page (the parent must not be the sandbox itself).
    const elsewhere = runRoute(page, contextFor(target, 'sandbox.localhost:9090'), {}, noAuth);
    assert.notEqual(elsewhere, first);
    const js = runRoute(script, contextFor(SANDBOX_SCRIPT_PATH), {}, noAuth);
    assert.ok(Object.isFrozen(js));
    assert.equal(runRoute(script, contextFor(SANDBOX_SCRIPT_PATH), {}, noAuth), js);
  });
});
