// The adversarial run (docs/operations.md, "Tried as an attacker would"): on each storage kind (memory,
// embedded PGlite, PostgreSQL when TEST_DATABASE_URL is set), a service holding the fixture world is
// probed on loopback the way an attacker would: another user's ids on every route and socket, writes
// from another origin, a rebinding Host, credential guessing, and a soak of turns watched by live
// sockets, the HTTP edge's framing, methods, hosts and targets (test/support/edge-probes.ts), and a flood of
// edits of one queued directive. Each probe counts what it sent and fails the run on the first answer that breaks a rule.
// Bounded: ADVERSARIAL_SOAK_S seconds of soak per kind (default 20), the rest a fixed count;
// ADVERSARIAL_KINDS=memory,PGlite,PostgreSQL picks the kinds (all by default).
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test ADVERSARIAL_SOAK_S=60 npm run test:adversarial
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { WireEvent } from '../../domain/events.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { edgeProbes, probeMismatch, sendProbe } from '../support/edge-probes.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds } from '../support/storage-kinds.ts';
import { chatIdentities } from './chat-identities.ts';
import { worktreeFiles } from './worktree-files.ts';

const ALICE = 'Bearer token-alice';
const BOB = 'Bearer token-bob';
const SOAK_MS = Math.max(1, Number(process.env.ADVERSARIAL_SOAK_S ?? 20) || 20) * 1000;

/** Ids only alice may see: what must never reach bob, in any answer or event. */
const ALICE_ONLY = [F.root, F.fork, F.forkOfFork, F.conv, F.conv2, ...F.runs, F.pending, F.question, ...F.rootMsgs, F.artifact];
/** Path parameters filled with alice's ids, by name. */
const ALICE_PARAMS: Record<string, readonly string[]> = {
  id: [F.root, F.fork, F.forkOfFork, F.conv],
  thread: [F.root, F.fork],
  thread_id: [F.root, F.fork],
  cid: [F.conv, F.conv2],
  rid: [F.runs[0]!, F.runs[2]!],
  message_id: [F.rootMsgs[1]!],
  artifact_id: [F.artifact],
  channel: ['team-chat'],
};
/** A body each write accepts as it stands, by the end of its path. */
const BODIES: Record<string, unknown> = {
  directives: { text: 'Carry on' },
  responses: { responses: [{ id: F.pending, option: 'allow' }] },
  teleport: { destination: { channel: 'team-chat', id: 'general' } },
  summon: { route: 'codex', brief: 'Take over' },
  'permission-mode': { permission_mode: 'plan' },
  cancel: {},
  session: { token: 'token-alice' },
};

interface Operation { readonly method: string; readonly path: string }

/** A request with full control of its headers, from a chosen local address. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown, localAddress = '127.0.0.1') {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, localAddress, agent: false,
      headers: { ...headers, ...(text === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const fill = (path: string, pick: number): string =>
  path.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => { const ids = ALICE_PARAMS[name] ?? [F.root]; return ids[pick % ids.length]!; });

/** Bob, by bearer token and by cookie, on every route that names an id, with each of alice's ids. */
async function crossUser(service: TestService, operations: readonly Operation[]): Promise<number> {
  let sent = 0;
  const credentials: Record<string, string>[] = [{ authorization: BOB }, { cookie: 'console_session=token-bob' }];
  for (const op of operations.filter((o) => o.path.includes('{') && !o.path.startsWith('/artifacts/'))) {
    for (let pick = 0; pick < 4; pick++) {
      for (const credential of credentials) {
        const path = fill(op.path, pick);
        const body = op.method === 'GET' ? undefined : BODIES[op.path.split('/').at(-1)!] ?? {};
        const res = await send(service.port, op.method, path, credential, body);
        sent += 1;
        const where = `${op.method} ${path} as bob -> ${res.status} ${res.text.slice(0, 200)}`;
        // The socket route answers 426 to a plain GET; an admin route 403 to a member, whatever the body; a hook's
        // call surface takes the hook's secret, never a user's credential: 401, an unknown hook and a wrong secret
        // alike; any other route: another user's id is unknown.
        const expected = op.path.startsWith('/api/admin/') ? res.status === 403 && res.text.includes('"not_admin"')
          : op.path.startsWith('/api/hooks/') ? res.status === 401 && res.text.includes('"unauthenticated"')
          : res.status === 404 || (op.path.endsWith('/live') && res.status === 426);
        assert.ok(expected, where);
        for (const id of ALICE_ONLY) assert.ok(!res.text.includes(id), `${where}: leaks ${id}`);
      }
    }
  }
  // Bob's sockets on alice's threads: refused, or open and silent.
  const sockets: LiveClient[] = [];
  for (const thread of [F.root, F.fork, F.forkOfFork, F.shared]) {
    for (let i = 0; i < 8; i++) {
      const opened = await connectLive(service.port, { thread, after: '0' }, { authorization: BOB });
      sent += 1;
      if ('refused' in opened) assert.ok([403, 404].includes(opened.refused), `bob's socket on ${thread}: ${opened.refused}`);
      else sockets.push(opened);
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const socket of sockets) {
    for (const event of socket.events) for (const id of ALICE_ONLY) assert.ok(!JSON.stringify(event).includes(id), `bob's socket got ${id}`);
    socket.close();
  }
  return sent;
}

/** Every write, with alice's own token, sent from another site: refused 403 (or 421 for a foreign Host). */
async function crossOrigin(service: TestService, operations: readonly Operation[]): Promise<number> {
  let sent = 0;
  const foreign: Record<string, string>[] = [
    { origin: 'http://evil.example' },
    { origin: 'null' },
    { origin: `http://localhost:${service.port + 1}` },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site', origin: service.sandboxOrigin ?? 'http://sandbox.localhost' },
  ];
  for (const op of operations.filter((o) => o.method !== 'GET' && !o.path.startsWith('/artifacts/'))) {
    for (const headers of foreign) {
      const path = fill(op.path, 0);
      const res = await send(service.port, op.method, path, { authorization: ALICE, ...headers }, BODIES[op.path.split('/').at(-1)!] ?? {});
      sent += 1;
      // A hook's call surface has no same-origin guard (its callers are other services, and it takes no cookie,
      // only the hook's own secret, which no other site holds): alice's token is no hook's secret there, 401.
      const refused = op.path.startsWith('/api/hooks/') ? 401 : 403;
      assert.equal(res.status, refused, `${op.method} ${path} ${JSON.stringify(headers)} -> ${res.status} ${res.text.slice(0, 200)}`);
    }
  }
  return sent;
}

/** A page on evil.example whose name resolves to loopback: every route refused 421, the sandbox paths 404. */
async function rebinding(service: TestService, operations: readonly Operation[]): Promise<number> {
  let sent = 0;
  const host = `evil.example:${service.port}`;
  for (const op of operations) {
    const path = fill(op.path, 0);
    const body = op.method === 'GET' ? undefined : BODIES[op.path.split('/').at(-1)!] ?? {};
    const res = await send(service.port, op.method, path, { host, origin: `http://${host}`, authorization: ALICE }, body);
    sent += 1;
    const sandboxPath = op.path === '/artifacts/sandbox' || op.path === '/artifacts/sandbox.js';
    assert.equal(res.status, sandboxPath ? 404 : 421, `${op.method} ${path} Host ${host} -> ${res.status} ${res.text.slice(0, 200)}`);
  }
  const socket = await connectLive(service.port, { thread: F.root, after: '0' }, { authorization: ALICE, host, origin: `http://${host}` });
  sent += 1;
  assert.ok('refused' in socket && socket.refused === 421, `a rebinding socket: ${JSON.stringify('refused' in socket ? socket : 'opened')}`);
  return sent;
}

/** Raw requests at the HTTP edge (test/support/edge-probes.ts), twice over: each answered as its table says. */
async function edge(service: TestService): Promise<number> {
  let sent = 0;
  for (let round = 0; round < 2; round++) {
    for (const probe of edgeProbes(service.port, F.root)) {
      const answer = await sendProbe(service.port, probe.bytes);
      sent += 1;
      const mismatch = probeMismatch(probe, answer);
      assert.equal(mismatch, null, `${probe.name}: ${mismatch}`);
    }
  }
  return sent;
}

/**
 * One queued directive edited again and again with a long text while its thread's turn holds: every edit
 * answered, and a fresh replay of the thread carries the latest text once, not every version (the probe
 * that found 300 edits of 100 KB replayed as 30 MB).
 */
async function editFlood(service: TestService): Promise<{ edits: number; replayBytes: number }> {
  const EDITS = 60;
  const SIZE = 100_000;
  const key = crypto.randomUUID();
  const watcher = (await connectLive(service.port, { thread: key, after: '0' }, { authorization: ALICE })) as LiveClient;
  const held = await send(service.port, 'POST', `/api/console/threads/${key}/directives`, { authorization: ALICE }, { text: 'hold [wait]', model: 'claude:opus' });
  assert.equal(held.status, 202, held.text);
  await watcher.until((events) => events.some((event) => event.type === 'run_started'));
  const thread = (JSON.parse(held.text) as { thread_id: string }).thread_id;
  const queued = await send(service.port, 'POST', `/api/console/threads/${thread}/directives`, { authorization: ALICE }, { text: 'queued', when_busy: 'queue' });
  assert.equal(queued.status, 202, queued.text);
  const item = (JSON.parse(queued.text) as { queued: { id: string } }).queued.id;
  for (let i = 0; i < EDITS; i++) {
    const res = await send(service.port, 'PATCH', `/api/console/threads/${thread}/queue/${item}`, { authorization: ALICE }, { text: `${i} `.padEnd(SIZE, 'x') });
    assert.equal(res.status, 200, `edit ${i}: ${res.status} ${res.text.slice(0, 200)}`);
  }
  await watcher.until((events) => events.filter((event) => event.type === 'queued').length === EDITS + 1);
  watcher.close();
  const replay = (await connectLive(service.port, { thread, after: '0' }, { authorization: ALICE })) as LiveClient;
  const events = await replay.until((got) => got.filter((event) => event.type === 'queued').length === EDITS + 1);
  replay.close();
  const texts = events.filter((event) => event.type === 'queued' && typeof event.data.text === 'string').map((event) => event.data.text);
  assert.deepEqual(texts, [`${EDITS - 1} `.padEnd(SIZE, 'x')], 'a replay carries the latest text of the item once');
  const replayBytes = events.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)), 0);
  assert.ok(replayBytes < 2 * SIZE + EDITS * 400, `the replay is ${replayBytes} bytes`);
  await send(service.port, 'POST', `/api/console/threads/${thread}/cancel`, { authorization: ALICE }, {});
  return { edits: EDITS, replayBytes };
}

/** Wrong tokens and cookies from one address are stopped (429); alice's right token from another still works. */
async function guessing(service: TestService): Promise<{ sent: number; refused: number }> {
  let sent = 0;
  let refused = 0;
  for (let i = 0; i < 200; i++) {
    const guess = `token-alice${i}`;
    const headers: Record<string, string> = i % 2 === 0 ? { authorization: `Bearer ${guess}` } : { cookie: `console_session=${guess}` };
    const res = await send(service.port, 'GET', '/api/console/threads', headers, undefined, '127.0.0.3');
    sent += 1;
    assert.ok(res.status === 401 || res.status === 429, `guess ${i}: ${res.status}`);
    if (res.status === 429) refused += 1;
    if (i % 20 === 0) {
      const own = await send(service.port, 'GET', '/api/console/threads', { authorization: ALICE }, undefined, '127.0.0.4');
      assert.equal(own.status, 200, `alice from another address while guesses go on: ${own.status}`);
    }
  }
  assert.ok(refused >= 150, `only ${refused} of ${sent} guesses were refused 429`);
  return { sent, refused };
}

/** The event types a turn's end is told by: the thread takes a directive again after it. */
const turnEnded = (events: readonly WireEvent[], turns: number) => events.filter((event) => event.type === 'reflex_asleep').length >= turns;

/** A directive, asked again while the turn that just ended is still being released (409 turn_running). */
async function direct(service: TestService, key: string, text: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const res = await send(service.port, 'POST', `/api/console/threads/${key}/directives`, { authorization: ALICE }, { text, model: 'claude:opus' });
    if (res.status === 202) return;
    assert.ok(res.status === 409 && /turn_running/.test(res.text) && attempt < 50, `directive on ${key}: ${res.status} ${res.text.slice(0, 200)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Turns, one after another on four threads, each watched by two live sockets, for SOAK_MS: afterwards
 * every socket has seen exactly what a fresh replay of its thread holds, each event once and in order.
 */
async function soak(service: TestService): Promise<{ turns: number; events: number; sockets: number }> {
  const keys = [0, 1, 2, 3].map(() => crypto.randomUUID());
  const watchers = new Map<string, LiveClient[]>();
  for (const key of keys) {
    const pair: LiveClient[] = [];
    for (let i = 0; i < 2; i++) pair.push((await connectLive(service.port, { thread: key, after: '0' })) as LiveClient);
    watchers.set(key, pair);
  }
  const deadline = Date.now() + SOAK_MS;
  const done = new Map<string, number>();
  await Promise.all(keys.map(async (key) => {
    let turns = 0;
    while (Date.now() < deadline) {
      await direct(service, key, `Soak turn ${turns + 1}`);
      turns += 1;
      await watchers.get(key)![0]!.until((events) => turnEnded(events, turns), 30_000).catch(async (error: unknown) => {
        // Tell a turn that never ended from events that never arrived: what a fresh replay holds, and the thread.
        const replay = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        replay.close();
        const last = replay.events.at(-1);
        const thread = await send(service.port, 'GET', `/api/console/threads/${key}`, { authorization: ALICE });
        throw new Error(`turn ${turns} on ${key}: the watcher saw ${watchers.get(key)![0]!.events.length} events, a replay ${replay.events.length} (last ${last?.seq}:${last?.type}); thread ${thread.text.slice(0, 400)}`, { cause: error });
      });
    }
    done.set(key, turns);
  }));
  let events = 0;
  for (const key of keys) {
    const turns = done.get(key)!;
    const replay = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
    const stored = await replay.until((got) => turnEnded(got, turns), 60_000).catch((error: unknown) => {
      const last = replay.events.at(-1);
      throw new Error(`${key}: a replay from 0 holds ${replay.events.length} events (last ${last?.seq}:${last?.type}), not ${turns} turns`, { cause: error });
    });
    replay.close();
    assert.deepEqual(stored.map((event) => event.seq), stored.map((_, k) => k + 1), `${key}: the replay is every seq from 1`);
    for (const [n, socket] of watchers.get(key)!.entries()) {
      await socket.until((got) => turnEnded(got, turns), 30_000).catch((error: unknown) => {
        const last = socket.events.at(-1);
        throw new Error(`${key}: watcher ${n} saw ${socket.events.length} events (last ${last?.seq}:${last?.type}), the replay ${stored.length}`, { cause: error });
      });
      assert.deepEqual(socket.events.map((event) => [event.seq, event.type]), stored.map((event) => [event.seq, event.type]), `${key}: a live socket saw what is stored, once, in order`);
      socket.close();
    }
    events += stored.length;
  }
  return { turns: [...done.values()].reduce((a, b) => a + b, 0), events, sockets: keys.length * 2 };
}

const only = process.env.ADVERSARIAL_KINDS?.split(',');
for (const kind of storageKinds('console_adversarial').filter((k) => only === undefined || only.some((name) => k.name.includes(name)))) {
  const opened = await kind.open();
  await opened.storage.importWorld(fixtureWorld());
  const service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage: opened.storage });
  try {
    const doc = JSON.parse((await send(service.port, 'GET', '/api/openapi.json', {})).text) as { paths: Record<string, Record<string, unknown>> };
    const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((method) => ({ method: method.toUpperCase(), path })));
    const started = performance.now();
    const users = await crossUser(service, operations);
    const origins = await crossOrigin(service, operations);
    const hosts = await rebinding(service, operations);
    const probes = await edge(service);
    const flood = await editFlood(service);
    const guesses = await guessing(service);
    const soaked = await soak(service);
    const s = ((performance.now() - started) / 1000).toFixed(0);
    console.log(`${kind.name}: ${users} cross-user requests and sockets, ${origins} cross-origin writes, ${hosts} rebinding requests, ` +
      `${probes} edge probes, ${flood.edits} edits of 100 KB replayed in ${Math.round(flood.replayBytes / 1024)} KB, ` +
      `${guesses.sent} guesses (${guesses.refused} refused 429), soak of ${SOAK_MS / 1000} s: ${soaked.turns} turns, ${soaked.events} events to ${soaked.sockets} sockets, ` +
      `each once and in order; ${s} s; no rule broken`);
  } finally {
    await service.close();
    await opened.close();
  }
}

// Identities a chat room can claim (once, on memory: what is probed is the chat adapter, not the storage).
const chat = await chatIdentities();
console.log('skipped' in chat ? `chat identities: skipped: ${chat.skipped}` : `chat identities: ${chat.sent} forged stanzas, live and from the archive; none ran as alice, opened a thread or linked an address`);

// Files an agent can write in its worktree, then every changes route (once, on memory: the probe is git's, not the storage's).
const files = await worktreeFiles();
console.log(`worktree files: ${files.writes} hostile writes, ${files.requests} requests; no planted command ran, no 500, nothing from outside the worktree shown`);
