import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { storageKinds, type StorageKind } from '../support/storage-kinds.ts';
import type { Answer } from '../support/http.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

/**
 * A fuzz of every endpoint of the OpenAPI description, with a valid token: generated path ids,
 * queries and bodies, hostile strings among them (NUL, lone and split surrogates, strings at and
 * past their limits, wrong types, deep nesting, raw bytes that are not UTF-8). Whatever arrives:
 * never a 5xx (but the documented 502 of an artifact whose provider cannot be reached), every
 * error is problem+json, and afterwards no thread of the caller's is left with a turn running.
 */

const ALICE = 'Bearer token-alice';
/**
 * Run counts per operation: small, so the file stays within a few tens of seconds on each storage.
 * `FUZZ_SCALE` multiplies them for a longer run (docs/operations.md, the adversarial figures).
 */
const SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1) || 1);
const runsOn = (kind: string): number => (kind === 'memory' ? 60 : 20) * SCALE;

// Hostile text. Lone surrogates and NUL are the ones PostgreSQL refuses; the rest probe limits and parsers.
const SPECIAL = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udbff', '\udc00', '\udfff', 'x\ud83d', '\ude00x', '\ud83d\ude00', 'é', '\u2028',
  '%', '%00', '%zz', '..', '../../etc/passwd', '<script>alert(1)</script>', '__proto__', 'constructor', 'null', '[approval',
  'x'.repeat(100), 'x'.repeat(200), 'x'.repeat(201), 'x'.repeat(500), 'x'.repeat(2001),
];
const IDS = [F.root, F.fork, F.forkOfFork, F.shared, F.bobThread, F.conv, F.conv2, F.bobConv, F.runs[0], F.pending, F.question,
  F.rootMsgs[1]!, F.artifact, F.artifactBob, F.root.toUpperCase(), '00000000-0000-0000-0000-000000000000'];

// No `[`: a generated text must never carry a demo marker such as [approval] or [hang].
const plain = (s: string) => s.replaceAll('[', '(');
const hostile: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 2, arbitrary: fc.constantFrom(...IDS) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map(plain) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map(plain) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }).map(plain) },
);
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.constant([]), fc.constant({}),
  fc.array(hostile, { maxLength: 3 }), fc.dictionary(hostile, hostile, { maxKeys: 3 }),
);

/** A value a field of that name would accept, so generated requests reach past validation too. */
const VALID: Record<string, fc.Arbitrary<unknown>> = {
  text: fc.oneof(fc.constantFrom('Say hello', 'Fix the build', 'é ✓ \ud83d\ude00'), fc.string({ minLength: 1, maxLength: 40 }).map(plain)),
  message_id: fc.string({ minLength: 1, maxLength: 8 }).map(plain),
  model: fc.constantFrom('claude:opus', 'claude:sonnet', 'codex', 'claude:nope', null),
  project: fc.constantFrom('acme-web', 'infra', 'nowhere', null),
  permission_mode: fc.constantFrom('default', 'plan', 'auto', 'nope'),
  effort: fc.constantFrom('low', 'high', 'max', null),
  id: fc.constantFrom(F.pending, F.question, F.root, 'general', 'new', 'general/t1'),
  option: fc.constantFrom('allow', 'deny', 'maybe'),
  answer: fc.constantFrom('main', ''),
  channel: fc.constantFrom('console', 'team-chat', 'quiet', 'nowhere'),
  destination: fc.constantFrom({ channel: 'team-chat', id: 'general' }, { channel: 'team-chat', id: 'general/t1' }, { channel: 'console', id: 'new' }, { channel: 'team-chat', id: 'ops' }),
  new_thread: fc.boolean(),
  prompt: fc.constantFrom('Carry on', null),
  route: fc.constantFrom('codex', 'claude:opus', 'claude:sonnet', 'nobody'),
  brief: fc.constantFrom('Take over', ' '),
  hint: fc.constantFrom('a hint', null),
  token: fc.constantFrom('token-alice', 'token-bob', 'nobody-token'),
};

/** Path parameters that fit a thread of alice's (the fixture's conversation, run, ledger artifact). */
const COHERENT: Record<string, (thread: string) => string> = {
  cid: () => F.conv,
  rid: () => F.runs[0]!,
  message_id: () => F.rootMsgs[1]!,
  artifact_id: () => F.artifact,
  channel: () => 'team-chat',
  thread: (thread) => (thread === F.root ? crypto.randomUUID() : thread),
};

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[] };

/** A body in the shape of `schema`, each field mostly valid, else hostile or of a wrong type; any field may be missing. */
function bodyOf(schema: JsonSchema | undefined, name = '', depth = 0): fc.Arbitrary<unknown> {
  const options: fc.WeightedArbitrary<unknown>[] = [{ weight: 1, arbitrary: hostile }, { weight: 1, arbitrary: wrongType }];
  if (VALID[name] !== undefined) options.push({ weight: 6, arbitrary: VALID[name] });
  if (depth < 3 && schema?.properties !== undefined) {
    const shape = Object.fromEntries(Object.entries(schema.properties).map(([key, sub]) => [key, bodyOf(sub, key, depth + 1)]));
    options.push({ weight: 6, arbitrary: fc.record(shape) }, { weight: 2, arbitrary: fc.record(shape, { requiredKeys: [] }) });
  }
  if (depth < 3 && schema?.items !== undefined) options.push({ weight: 6, arbitrary: fc.array(bodyOf(schema.items, name, depth + 1), { minLength: 1, maxLength: 3 }) });
  if (depth < 3 && schema?.anyOf !== undefined) options.push(...schema.anyOf.map((sub) => ({ weight: 3, arbitrary: bodyOf(sub, name, depth + 1) })));
  return fc.oneof(...options);
}

/**
 * Percent-encodes text as an attacker's bytes would arrive: UTF-8, and a lone surrogate as the
 * three bytes of its code unit (what no encoder makes, and what a decoder must survive).
 */
function encode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(text[i]!);
  }
  return out;
}
/** A path segment or query value: encoded, or raw (`%`, `%zz` and the like left as they are). */
const component = fc.oneof(hostile.map(encode), fc.constantFrom('%', '%zz', '%ff', '%C0%80', '%ED%A0%80', '%00', 'a%2Fb', '..'));

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly sandbox: boolean;
  readonly query: string[];
  readonly body: JsonSchema | undefined;
}

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly body?: string | Buffer;
  readonly contentType?: string;
}

/** Bodies each write accepts as they stand, by the end of its path. */
const WHOLE: Record<string, unknown[]> = {
  directives: [{ text: 'Carry on' }, { text: 'With a model', model: 'claude:sonnet', effort: 'high', permission_mode: 'plan' }],
  responses: [{ responses: [{ id: F.question, answer: 'main' }] }, { responses: [{ id: F.pending, option: 'allow' }] }],
  teleport: [{ destination: { channel: 'team-chat', id: 'general' } }, { destination: { channel: 'console', id: 'new' }, prompt: 'Go on' }],
  summon: [{ route: 'codex', brief: 'Take over' }, { route: 'claude:opus', brief: 'Back to you', hint: 'h' }],
  'permission-mode': [{ permission_mode: 'plan' }, { permission_mode: 'default' }],
  fork: [{ message_id: F.rootMsgs[1] }, { message_id: F.rootMsgs[2], text: 'Another way', model: 'claude:sonnet' }],
};

/**
 * Requests for one operation: its path with generated ids (`made` adds threads made for the fuzz),
 * a generated query, a generated, whole or raw body.
 */
function requestsFor(op: Operation, made: readonly string[]): fc.Arbitrary<Sent> {
  const names = [...op.path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]!);
  // Ids that belong together (a conversation of that thread, ...), so requests reach the use cases too.
  const fitting = fc.constantFrom(F.root, F.fork, F.shared, ...made).chain((thread) => fc.constantFrom(...names.map((name) => COHERENT[name]?.(thread) ?? thread)).map(() => names.map((name) => COHERENT[name]?.(thread) ?? thread)));
  const independent = fc.tuple(...names.map((name) => fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(name === 'channel' ? ['team-chat', 'quiet', 'console', 'nowhere'] : [...IDS, ...made])) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: component },
  )));
  const segments = names.length === 0 ? fc.constant([] as string[]) : fc.oneof(fitting, independent);
  const queryKey = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...op.query, 'limit', 'before', 'x') }, { weight: 1, arbitrary: hostile.map(encode) });
  const queryValue = fc.oneof(
    { weight: 2, arbitrary: component },
    { weight: 2, arbitrary: fc.constantFrom('1', '50', '200', '201', '0', '-1', 'general', F.rootMsgs[3]!).map(encode) },
    // A sandbox policy: a JSON object with an origin and CSP lists of hostile entries.
    { weight: 1, arbitrary: fc.record({ parentOrigin: fc.constantFrom('http://localhost:8080', 'null', '*'), csp: fc.record({ connectDomains: fc.array(hostile, { maxLength: 3 }), resourceDomains: fc.array(hostile, { maxLength: 3 }) }, { requiredKeys: [] }) }).map((policy) => encode(JSON.stringify(policy))) },
  );
  const query = fc.array(fc.tuple(queryKey, queryValue), { maxLength: 3 });
  const rawBodies: fc.Arbitrary<Pick<Sent, 'body' | 'contentType'>> = fc.constantFrom(
    { body: '' }, { body: 'null' }, { body: '[]' }, { body: '{' }, { body: '"text"' },
    { body: '{"text": "hi \\ud800"}' }, { body: '{"text": "\\udc00", "brief": "\\u0000", "token": "\\ud83d"}' },
    { body: `${'['.repeat(10_000)}${']'.repeat(10_000)}` },
    { body: `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}` },
    { body: JSON.stringify({ text: 'x'.repeat(100_001), brief: 'x'.repeat(100_001), permission_mode: 'x'.repeat(101) }) },
    { body: JSON.stringify({ text: 'x'.repeat(1024 * 1024 - 20) }) },
    { body: 'x'.repeat(1024 * 1024 + 1) },
    { body: Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    { body: '\ufeff{"text": "bom"}' },
    { body: '{"text": "plain"}', contentType: 'text/plain' },
    { body: '{"text": "form"}', contentType: 'application/x-www-form-urlencoded' },
  );
  const generated = bodyOf(op.body).map((value) => ({ body: JSON.stringify(value) ?? 'null' }));
  const whole = fc.constantFrom(...(WHOLE[op.path.split('/').at(-1)!] ?? [{}])).map((value) => ({ body: JSON.stringify(value) }));
  const body = op.body === undefined
    ? fc.constant({})
    : fc.oneof({ weight: 4, arbitrary: generated }, { weight: 2, arbitrary: whole }, { weight: 1, arbitrary: rawBodies });
  return fc.tuple(segments, query, body).map(([ids, pairs, b]) => {
    let i = 0;
    const path = op.path.replace(/\{[A-Za-z_]+\}/g, () => ids[i++] as string);
    const search = pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`;
    return { method: op.method, path: `${path}${search}`, ...b };
  });
}

/** The contract every answer keeps, whatever was sent. */
function check(sent: Sent, res: Answer): void {
  const where = `${sent.method} ${sent.path.slice(0, 200)} ${typeof sent.body === 'string' ? sent.body.slice(0, 200) : ''} -> ${res.status} ${res.text.slice(0, 300)}`;
  // The one 5xx a request can cause: an artifact whose provider is unreachable (none runs in this test).
  const providerDown = res.status === 502 && /MCP app resource could not be loaded/.test(res.text);
  assert.ok(res.status < 500 || providerDown, where);
  if (res.status >= 400) assert.match(String(res.headers['content-type']), /^application\/problem\+json/, where);
}

function fuzzSuite(kind: StorageKind): void {
  const name = kind.name;
  describe(`fuzz of every endpoint (${name})`, () => {
    let service: TestService;
    let closeDb: () => Promise<void>;
    const operations: Operation[] = [];
    /** Threads alice made before the fuzz, each with a finished turn: what summon and teleport can move. */
    const made: string[] = [];
    const stats: Record<string, number[]> = {};
    /** Requests sent by the fuzz, for the figure docs/operations.md gives. */
    let sentCount = 0;

    before(async () => {
      const opened = await kind.open();
      closeDb = opened.close;
      await opened.storage.importWorld(fixtureWorld());
      // The fuzzed sign-ins are wrong tokens from this one client: past the failed-credential limit every
      // later request would be a 429, and the routes would go unfuzzed. The limit has tests of its own.
      service = await startService({ SIGNIN_ATTEMPTS_PER_MINUTE: '100000' }, { storage: opened.storage });
      for (let i = 0; i < 2; i++) {
        const key = crypto.randomUUID();
        const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
        const res = await send({ method: 'POST', path: `/api/console/threads/${key}/directives`, body: '{"text": "Start", "model": "claude:opus"}' }, false);
        assert.equal(res.status, 202, res.text);
        await socket.until((events) => events.some((e) => e.type === 'reflex_asleep'));
        socket.close();
        made.push(res.json().thread_id);
      }
      const doc = (await service.ask({ path: '/api/openapi.json', headers: { authorization: ALICE } })).json();
      for (const [path, ops] of Object.entries<Record<string, { tags: string[]; parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>(doc.paths)) {
        for (const [method, op] of Object.entries(op_s(ops))) {
          operations.push({
            method: method.toUpperCase(), path, sandbox: op.tags.includes('sandbox'),
            query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
            body: op.requestBody?.content['application/json']?.schema,
          });
        }
      }
    });
    after(async () => {
      await service.close();
      await closeDb();
    });

    const send = (sent: Sent, sandbox: boolean) => {
      sentCount += 1;
      return service.ask({
        method: sent.method, path: sent.path, body: sent.body,
        headers: {
          authorization: ALICE,
          ...(sandbox ? { host: `sandbox.localhost:${service.port}` } : {}),
          // Node's client sends a GET or DELETE body unframed unless its length is given.
          ...(sent.body !== undefined ? { 'content-type': sent.contentType ?? 'application/json', 'content-length': String(Buffer.byteLength(sent.body)) } : {}),
        },
      });
    };

    it('the OpenAPI description lists the routes to fuzz', () => {
      assert.ok(operations.length >= 25, `only ${operations.length} operations`);
      assert.ok(operations.some((op) => op.path.endsWith('/directives') && op.body !== undefined));
    });

    it('never answers a 5xx, and every error is problem+json', async () => {
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(requestsFor(op, made), async (sent) => {
            const res = await send(sent, op.sandbox);
            check(sent, res);
            if (process.env.FUZZ_STATS) (stats[`${op.method} ${op.path}`] ??= []).push(res.status);
          }),
          { numRuns: runsOn(name) },
        );
      }
    });

    after(() => {
      console.log(`fuzz (${name}): ${sentCount} requests sent`);
      if (process.env.FUZZ_STATS) for (const [op, list] of Object.entries(stats)) console.log(op, [...new Set(list)].sort().join(','));
    });

    it('other methods on every path answer 405 as problem+json', async () => {
      for (const path of new Set(operations.map((op) => op.path))) {
        const concrete = path.replace(/\{[A-Za-z_]+\}/g, F.fork);
        const allowed = new Set(operations.filter((op) => op.path === path).map((op) => op.method));
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allowed.has(m))) {
          const res = await send({ method, path: concrete, body: '{}' }, operations.find((op) => op.path === path)!.sandbox);
          check({ method, path: concrete }, res);
        }
      }
    });

    it("afterwards no thread of the caller's is left with a turn running", async () => {
      const threads: { id: string; channel: string }[] = [];
      for (let before: string | null = null; ;) {
        const page = (await service.ask({ path: `/api/console/threads?limit=200${before ? `&before=${before}` : ''}`, headers: { authorization: ALICE } })).json();
        threads.push(...page.items);
        if (page.next === null) break;
        before = page.next;
      }
      // F.root's fixture conversation is stored as running with no holder: not the fuzz's doing.
      const probed = threads.filter((t) => t.id !== F.root);
      assert.ok(probed.length >= 3);
      const deadline = Date.now() + 15_000;
      for (const thread of probed) {
        for (;;) {
          const res = await send({ method: 'POST', path: `/api/console/threads/${thread.id}/directives`, body: '{"text": "Still answering?"}' }, false);
          check({ method: 'POST', path: thread.id }, res);
          const busy = res.status === 409 && /turn is running/i.test(res.text);
          if (!busy) break;
          assert.ok(Date.now() < deadline, `thread ${thread.id} is still locked: ${res.text}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    });
  });
}

/** The operations of one path item (skipping anything that is not an HTTP method). */
function op_s<T>(ops: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(ops).filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method)));
}

for (const kind of storageKinds('console_fuzz')) fuzzSuite(kind);
