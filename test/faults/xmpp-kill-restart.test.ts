// Issue 26, "the service killed with a reply unread (read after restart, once)", with a real kill -9: `npm start`
// in a process group of its own, on a PostgreSQL database of its own, its world file holding an xmpp channel on a
// private Prosody where a conversation lives in a room thread and alice is linked. Each case kills the whole group
// with SIGKILL (no clean unavailable presence, no drain, no `done`), then starts it again on the same database:
// a. alice writes while the service is dead: read from the room's archive after the restart, run once, one answer;
// b. the message was claimed and its directive not stored yet when killed (the test holds the thread's row lock,
//    so the write waits there): after the restart it is not lost, runs once, one answer. Before the fix the
//    restarted service saw the dead instance's claim, skipped the message and moved the room's cursor past it;
// b'. the directive was stored and the turn started, the claim not yet done (the test holds the claim's row):
//    read again after the restart, it runs nothing twice (its stanza id is the directive's message_id); the
//    turn the kill cut short is swept (turn_lease_expired) and its error line is the one post alice reads;
// c. a post stored in the delivery outbox and not yet posted (the XMPP server was down) when killed: posted
//    once after the restart;
// d. (issue 41) a `link <code>` direct message claimed and not answered when killed (the test holds the code's
//    row): read again from the bot's own archive after the restart, answered once, linked once. Before, a
//    direct message was only ever read live, and the restarted service never saw it again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg, { type Pool } from 'pg';
import { ChatClient, type SeenMessage } from '../support/chat-client.ts';
import { groupAlive, startNpm, waitUntil, type NpmStarted } from '../support/npm-start.ts';
import { prosodyMissing, startPrivateProsody, type PrivateProsody } from '../support/private-prosody.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

const PASSWORD = 'bot-kill9-password-5';
/** The services' turn lease. */
const TURN_LEASE_MS = 15_000;
/**
 * How long a chat message's claim holds once its instance stopped renewing it (CHAT_CLAIM_MS), 30 s here, longer than a
 * restart takes to read the room's archive, so a claim the killed instance left is still held when it does.
 */
const CHAT_CLAIM_MS = 30_000;
const databaseUrl = process.env.TEST_DATABASE_URL;
const skip = prosodyMissing() ?? (databaseUrl === undefined ? 'TEST_DATABASE_URL is not set (the faults hold row locks in PostgreSQL)' : null);

async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 60_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what} after ${ms} ms`);
}

describe('kill -9 of npm start with an xmpp channel, then a restart', { skip: skip ?? false, timeout: 600_000 }, () => {
  let server: PrivateProsody;
  let scratch: ScratchDatabase;
  let db: Pool;
  let alice: ChatClient;
  let bob: ChatClient;
  let service: NpmStarted | undefined;
  let env: Record<string, string>;
  let general: string;
  let thread: string;
  /** The console thread the conversation landed on, and its conversation. */
  let landing: string;
  const dirs: string[] = [];
  const extraClients: ChatClient[] = [];
  const locks: Pool[] = [];

  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${service!.port}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: 'Bearer dev-alice', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
  /** What the bot posted in the conversation's thread, as `client` saw it, from index `from` of what it saw. */
  const botSaid = (client: ChatClient, from = 0): SeenMessage[] =>
    client.seen.slice(from).filter((m) => m.room === general && m.thread === thread && m.originId !== null && /^[0-9a-f-]{36}$/.test(m.originId));
  const count = async (sql: string, params: unknown[]): Promise<number> => Number((await db.query(sql, params)).rows[0]!['n']);
  /** Directives (user lines) on the landing thread with this text. */
  const directivesWith = (text: string) => count("select count(*) as n from messages where thread_id = $1 and role = 'user' and text = $2", [landing, text]);
  const runsOfLanding = () => count('select count(*) as n from runs r join conversations c on c.id = r.conversation_id where c.thread_id = $1', [landing]);
  const running = () => count("select count(*) as n from runs r join conversations c on c.id = r.conversation_id where c.thread_id = $1 and r.status = 'running'", [landing]);
  /** The room messages claimed and not done (by the instance about to be killed). */
  const heldClaims = async () =>
    (await db.query("select key, claimed_until > now() as live from chat_claims where channel = 'team-xmpp' and not done and key like $1", [`${general}/%`])).rows as { key: string; live: boolean }[];

  const start = async () => {
    service = await startNpm(env, { killAfterFile: false });
  };
  /** SIGKILL to the whole group (npm, the service, its agents); resolves once nothing of it is alive. */
  const kill = async () => {
    const pid = service!.pid;
    service = undefined;
    process.kill(-pid, 'SIGKILL');
    await waitUntil(() => !groupAlive(pid), 10_000, 'the killed group to be gone');
  };
  /**
   * Ends the killed service's database sessions. A statement it sent that waits on a lock the test holds
   * would otherwise run once the lock goes (PostgreSQL notices a client gone only when it writes to it):
   * as if the kill landed after it. Ended now, the kill lands before it.
   */
  const endOrphans = async () => {
    const mine = await Promise.all(locks.map(async (l) => (await l.query('select pg_backend_pid() as pid')).rows[0]!['pid']));
    await db.query(`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and not (pid = any($1::int[]))`, [mine]);
  };
  /** A transaction on a connection of its own (a pool of one), holding `lock` (a `select … for update`) until it ends. */
  const holding = async (lock: string, params: unknown[]): Promise<Pool> => {
    const client = new pg.Pool({ connectionString: scratch.url, max: 1 });
    locks.push(client);
    await client.query('begin');
    const held = await client.query(lock, params);
    assert.equal(held.rowCount, 1, `the lock holds a row: ${lock}`);
    return client;
  };
  const release = async (client: Pool, how: 'commit' | 'rollback') => {
    await client.query(how);
    await client.end();
    locks.splice(locks.indexOf(client), 1);
  };
  /** Posts in the thread as alice and waits until the room took it (she sees it come back). */
  const alicePosts = async (text: string) => {
    await alice.post(general, thread, text);
    await eventually(`the room to take "${text}"`, () => alice.seen.some((m) => m.body === text), 20_000);
  };

  before(async () => {
    server = await startPrivateProsody();
    await server.register('console', PASSWORD);
    for (const user of ['alice', 'bob', 'dave']) await server.register(user, `${user}-pw-9`);
    alice = await ChatClient.connect(server, 'alice', 'alice-pw-9');
    bob = await ChatClient.connect(server, 'bob', 'bob-pw-9');
    general = `general@${server.muc}`;
    await alice.createRoom(general, { whois: 'anyone', name: 'General' });
    await bob.joinRoom(general);
    scratch = await createScratchDatabase(databaseUrl!, 'console_xmpp_kill');
    db = new pg.Pool({ connectionString: scratch.url, max: 1 });
    const world = JSON.parse(readFileSync(new URL('../../src/world/demo-world.json', import.meta.url), 'utf8'));
    world.channels.push({
      id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: ['claude'],
      xmpp: { service: server.service, domain: server.domain, muc: server.muc, jid: `console@${server.domain}`, password_env: 'XMPP_PASSWORD', nick: 'console' },
      links: { alice: `alice@${server.domain}` },
    });
    const source = world.threads[0].id as string;
    const dir = mkdtempSync(join(tmpdir(), 'console-xmpp-kill-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'world.json'), JSON.stringify(world));
    env = {
      CONSOLE_WORLD: join(dir, 'world.json'), XMPP_PASSWORD: PASSWORD, CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url,
      DATA_DIR: join(dir, 'data'), TURN_LEASE_MS: String(TURN_LEASE_MS), CHAT_CLAIM_MS: String(CHAT_CLAIM_MS),
    };
    await start();
    await eventually('the room listed', async () => {
      const res = await api(`/api/console/threads/${source}/channels/team-xmpp/addresses`);
      return res.status === 200 && res.text.includes(general);
    });
    const moved = await api(`/api/console/threads/${source}/teleport`, { destination: { channel: 'team-xmpp', id: general } });
    assert.equal(moved.status, 202, moved.text);
    const landed = await eventually('the delivery seen by bob', () => bob.seen.find((m) => m.room === general && m.body?.includes('moved the conversation')));
    thread = landed.thread!;
    const [conversation] = JSON.parse((await api(`/api/console/threads/${source}/conversations`)).text) as { moved_to: { thread_id: string } }[];
    landing = conversation!.moved_to.thread_id;
    // The room is read once before the first kill: its cursor is stored.
    await eventually('the room\'s cursor', async () => (await count("select count(*) as n from chat_cursors where channel = 'team-xmpp' and place = $1", [general])) === 1);
  });
  after(async () => {
    if (service !== undefined) {
      try {
        process.kill(-service.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const lock of locks) await lock.end().catch(() => {});
    for (const client of [alice, bob, ...extraClients]) await client?.close();
    await server?.destroy();
    await db?.end().catch(() => {});
    await scratch?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Settles, then: the text ran as one directive in one more run, and the bot posted exactly one thing since `mark`. */
  async function once(text: string, runsBefore: number, mark: number): Promise<SeenMessage> {
    await eventually('no turn running', async () => (await running()) === 0);
    await sleep(3_000);
    assert.equal(await directivesWith(text), 1, 'one directive of the message');
    assert.equal(await runsOfLanding(), runsBefore + 1, 'one run');
    const said = botSaid(bob, mark);
    assert.equal(said.length, 1, `one post in the thread: ${JSON.stringify(said.map((m) => m.body))}`);
    assert.deepEqual(await heldClaims(), [], 'no room message left claimed and not done');
    return said[0]!;
  }

  it('a. a message written while the service was dead is read after the restart and runs once', async () => {
    const text = 'a: written while the service was dead';
    const runsBefore = await runsOfLanding();
    const mark = bob.seen.length;
    await kill();
    await alicePosts(text);
    await start();
    await eventually('the answer in the thread', () => botSaid(bob, mark).find((m) => m.body!.includes('All done here.')));
    await once(text, runsBefore, mark);
  });

  it('b. a message claimed but not yet stored when killed is not lost, and runs once after the restart', async () => {
    const text = 'b: claimed just before the kill';
    const runsBefore = await runsOfLanding();
    const mark = bob.seen.length;
    // The directive's write waits on the thread's row (writeDirective locks it first): the message is claimed, nothing stored.
    const threadLock = await holding('select id from threads where id = $1 for update', [landing]);
    await alicePosts(text);
    const [claim] = await eventually('the message claimed', async () => { const held = await heldClaims(); return held.length === 1 && held; });
    await sleep(500);
    await kill();
    await endOrphans();
    await release(threadLock, 'rollback');
    assert.equal(await directivesWith(text), 0, 'killed before the directive was stored');
    await start();
    // The window the test means: the dead instance's claim still holds when the restarted one is up.
    assert.deepEqual(await heldClaims(), [{ key: claim!.key, live: true }], 'the dead instance\'s claim still holds after the restart');
    await eventually('the answer in the thread', () => botSaid(bob, mark).find((m) => m.body!.includes('All done here.')), 90_000);
    await once(text, runsBefore, mark);
  });

  it("b'. a message whose turn started, its claim not yet done when killed, runs nothing twice: one error post", async () => {
    const text = "b': [wait] stored just before the kill";
    const runsBefore = await runsOfLanding();
    const mark = bob.seen.length;
    const threadLock = await holding('select id from threads where id = $1 for update', [landing]);
    await alicePosts(text);
    const [claim] = await eventually('the message claimed', async () => { const held = await heldClaims(); return held.length === 1 && held; });
    // Its claim's row held: `done` waits once the directive is stored and the turn started.
    const claimLock = await holding("select key from chat_claims where channel = 'team-xmpp' and key = $1 for update", [claim!.key]);
    await release(threadLock, 'commit');
    await eventually('the turn started', async () => (await directivesWith(text)) === 1 && (await running()) === 1);
    await sleep(500);
    await kill();
    await endOrphans();
    await release(claimLock, 'rollback');
    assert.deepEqual((await heldClaims()).map((c) => c.key), [claim!.key], 'killed with the claim not done');
    await start();
    // The cut turn is swept once its lease lapses; its error line is posted in the thread.
    const failed = await eventually('the error post', () => botSaid(bob, mark).find((m) => m.body!.startsWith('The turn failed:')), 90_000);
    assert.match(failed.body!, /turn_lease_expired/);
    // The message is read again once the dead claim lapses: it finds its directive and runs nothing.
    await eventually('the message done', async () => (await heldClaims()).length === 0, 90_000);
    const post = await once(text, runsBefore, mark);
    assert.equal(post, failed);
  });

  it('d. a `link <code>` direct message claimed when killed is answered after the restart, once (issue 41)', async () => {
    const made = await fetch(`http://127.0.0.1:${service!.port}/api/account/links`, {
      method: 'POST', headers: { authorization: 'Bearer dev-bob-token', 'content-type': 'application/json' }, body: JSON.stringify({ channel: 'team-xmpp' }),
    });
    assert.equal(made.status, 201, await made.clone().text());
    const { code } = (await made.json()) as { code: string };
    const dmClaims = async () =>
      (await db.query("select key, done from chat_claims where channel = 'team-xmpp' and key like $1", [`dm/bob@${server.domain}/%`])).rows as { key: string; done: boolean }[];
    // The code's row held: the redemption waits there, the message claimed and nothing answered.
    const codeLock = await holding("select code_hash from channel_link_codes where user_id = 'bob' and channel = 'team-xmpp' for update", []);
    const mark = bob.direct.length;
    await bob.sendDirect(`console@${server.domain}`, `link ${code}`);
    await eventually('the direct message claimed', async () => (await dmClaims()).some((c) => !c.done));
    await kill();
    await endOrphans();
    await release(codeLock, 'rollback');
    assert.equal(await count("select count(*) as n from channel_links where user_id = 'bob' and channel = 'team-xmpp'", []), 0, 'killed before the link');
    await start();
    // Before, the restarted service never read it again: lost, and bob never answered.
    const linked = await eventually('bob told he is linked', () => bob.direct.slice(mark).find((m) => m.from === `console@${server.domain}` && m.body.startsWith('Linked:')), 90_000);
    assert.match(linked.body, new RegExp(`bob@${server.domain}`));
    await eventually('the direct message done', async () => (await dmClaims()).every((c) => c.done));
    await sleep(3_000);
    assert.deepEqual(bob.direct.slice(mark).filter((m) => m.from === `console@${server.domain}`).map((m) => m.body), [linked.body], 'answered once');
    assert.equal(await count("select count(*) as n from channel_links where user_id = 'bob' and channel = 'team-xmpp'", []), 1, 'linked once');
  });

  it('c. a post in the outbox, not yet posted when killed, is posted once after the restart', async () => {
    const text = 'c: [wait] hold on';
    const stopped = 'The turn was stopped.';
    await alicePosts(text);
    await eventually('the turn started', async () => (await directivesWith(text)) === 1 && (await running()) === 1);
    // The XMPP server away: the stop's post waits in the outbox.
    await server.stop();
    const cancelled = await api(`/api/console/threads/${landing}/cancel`, {});
    assert.equal(cancelled.status, 202, cancelled.text);
    await eventually('the post in the outbox', async () => (await count('select count(*) as n from deliveries where text = $1', [stopped])) === 1);
    await sleep(500);
    await kill();
    await server.start();
    // A person in the room on a fresh session (the old ones may be dropped by the restarted server).
    const dave = await eventually('dave in the room', async () => {
      const client = await ChatClient.connect(server, 'dave', 'dave-pw-9').catch(() => null);
      if (client === null) return null;
      extraClients.push(client);
      return client.joinRoom(general).then(() => client, () => null);
    }, 30_000);
    await start();
    await eventually('the stop posted', () => botSaid(dave).some((m) => m.body === stopped), 90_000);
    await eventually('the outbox empty', async () => (await count('select count(*) as n from deliveries', [])) === 0);
    await sleep(3_000);
    assert.equal(botSaid(dave).filter((m) => m.body === stopped).length, 1, 'posted once');
    assert.equal(await directivesWith(text), 1);
  });
});
