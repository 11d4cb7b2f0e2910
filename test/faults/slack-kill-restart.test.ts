// Issue 37, the Slack twin of test/faults/xmpp-kill-restart.test.ts, with a real kill -9: `npm start` in a
// process group of its own, on a PostgreSQL database of its own, its world file holding a slack channel on the
// tests' local Slack (test/support/fake-slack.ts: the Web API and Socket Mode) where a conversation lives in a
// thread and alice is linked. Each case kills the whole group with SIGKILL (its socket cut, no drain, no `done`),
// then starts it again on the same database:
// a. alice writes in the thread while the service is dead: after the restart it runs once, one answer (the local
//    Slack sends the envelope it could not hand to anyone as the new socket opens, and the thread is read from its
//    cursor on connect: whichever comes first, it runs once);
// b. the message was claimed and its directive not stored yet when killed (the test holds the thread's row lock,
//    so the write waits there): after the restart it is not lost, runs once, one answer;
// b'. the directive was stored and the turn started, the claim not yet done (the test holds the claim's row):
//    read again after the restart, it runs nothing twice (its message id is the directive's message_id); the
//    turn the kill cut short is swept (turn_lease_expired) and its error line is the one post in the thread;
// c. a post stored in the delivery outbox and not yet posted (the local Slack was stopped) when killed: posted
//    once after the restart;
// d. a post made in the thread whose answer had not come back when killed (so still in the outbox): after the
//    restart the thread is found to carry it (its metadata names the delivery) and it is not posted again.
// Each case counts the runs of the conversation, its directives, and every post of the bot in the thread.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg, { type Pool } from 'pg';
import { DELIVERY_EVENT } from '../../adapters/slack/deliver.ts';
import { startFakeSlack, type FakeSlack, type SlackMessage } from '../support/fake-slack.ts';
import { groupAlive, startNpm, waitUntil, type NpmStarted } from '../support/npm-start.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

/** The services' turn lease. */
const TURN_LEASE_MS = 15_000;
/**
 * How long a chat message's claim holds once its instance stopped renewing it (CHAT_CLAIM_MS), 30 s here, longer than a
 * restart takes to read the thread from its cursor, so a claim the killed instance left is still held when it does.
 */
const CHAT_CLAIM_MS = 30_000;
const GENERAL = 'C0GENERAL';
const ALICE = 'U0ALICE';
const databaseUrl = process.env.TEST_DATABASE_URL;
const skip = databaseUrl === undefined ? 'TEST_DATABASE_URL is not set (the faults hold row locks in PostgreSQL)' : null;

async function eventually<T>(what: string, found: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 60_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const value = await found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what} after ${ms} ms`);
}

/** What a message shows: its sections' text (the service's posts), else its text; entities decoded. */
function shownText(message: { text?: string; blocks?: unknown }): string {
  const sections = Array.isArray(message.blocks)
    ? (message.blocks as { type?: string; text?: { text?: string } }[]).filter((b) => b.type === 'section').map((b) => b.text?.text ?? '')
    : [];
  const raw = sections.length > 0 ? sections.join('') : (message.text ?? '');
  return raw.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describe('kill -9 of npm start with a slack channel, then a restart', { skip: skip ?? false, timeout: 600_000 }, () => {
  let slack: FakeSlack;
  let scratch: ScratchDatabase;
  let db: Pool;
  let service: NpmStarted | undefined;
  let env: Record<string, string>;
  /** The Slack thread the conversation lives in (its parent's ts). */
  let ts: string;
  /** The console thread the conversation landed on. */
  let landing: string;
  const dirs: string[] = [];
  const locks: Pool[] = [];

  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${service!.port}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: 'Bearer dev-alice', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
  /** Every post of the bot in the conversation's thread (its replies, the parent left out), oldest first. */
  const botReplies = (): SlackMessage[] => slack.replies(GENERAL, ts).filter((m) => m.ts !== ts && m.bot_id === slack.botId);
  /** The bot's posts in the thread from index `from` of them. */
  const botSaid = (from: number): SlackMessage[] => botReplies().slice(from);
  const count = async (sql: string, params: unknown[]): Promise<number> => Number((await db.query(sql, params)).rows[0]!['n']);
  /** Directives (user lines) on the landing thread with this text. */
  const directivesWith = (text: string) => count("select count(*) as n from messages where thread_id = $1 and role = 'user' and text = $2", [landing, text]);
  const runsOfLanding = () => count('select count(*) as n from runs r join conversations c on c.id = r.conversation_id where c.thread_id = $1', [landing]);
  const running = () => count("select count(*) as n from runs r join conversations c on c.id = r.conversation_id where c.thread_id = $1 and r.status = 'running'", [landing]);
  /** The channel's messages claimed and not done (by the instance about to be killed). */
  const heldClaims = async () =>
    (await db.query("select key, claimed_until > now() as live from chat_claims where channel = 'team-slack' and not done and key like $1", [`${GENERAL}/%`])).rows as { key: string; live: boolean }[];
  /** The thread's cursor in the chat inbox (the `ts` it was read to), or null. */
  const cursor = async (): Promise<string | null> =>
    ((await db.query("select stanza_id from chat_cursors where channel = 'team-slack' and place = $1", [`${GENERAL}:${ts}`])).rows[0]?.['stanza_id'] as string | undefined) ?? null;

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
  /** Alice's reply in the conversation's thread (the local Slack stores it, then hands its envelope to a socket, if any). */
  const alicePosts = (text: string) => slack.post(ALICE, GENERAL, text, { threadTs: ts });

  before(async () => {
    slack = await startFakeSlack();
    slack.addUser({ id: ALICE, name: 'alice' });
    slack.addChannel({ id: GENERAL, name: 'general' });
    scratch = await createScratchDatabase(databaseUrl!, 'console_slack_kill');
    db = new pg.Pool({ connectionString: scratch.url, max: 1 });
    const world = JSON.parse(readFileSync(new URL('../../src/world/demo-world.json', import.meta.url), 'utf8'));
    world.channels.push({
      id: 'team-slack', kind: 'slack', name: 'Team Slack', shared: true, browsable: true, agents: ['claude'],
      slack: { app_token_env: 'KILL_SLACK_APP_TOKEN', bot_token_env: 'KILL_SLACK_BOT_TOKEN', api_url: slack.apiUrl },
      links: { alice: ALICE },
    });
    const source = world.threads[0].id as string;
    const title = world.threads[0].title as string;
    const dir = mkdtempSync(join(tmpdir(), 'console-slack-kill-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'world.json'), JSON.stringify(world));
    env = {
      CONSOLE_WORLD: join(dir, 'world.json'), KILL_SLACK_APP_TOKEN: slack.appToken, KILL_SLACK_BOT_TOKEN: slack.botToken,
      CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url, DATA_DIR: join(dir, 'data'), TURN_LEASE_MS: String(TURN_LEASE_MS), CHAT_CLAIM_MS: String(CHAT_CLAIM_MS),
    };
    await start();
    await eventually('the channel listed', async () => {
      const res = await api(`/api/console/threads/${source}/channels/team-slack/addresses`);
      return res.status === 200 && res.text.includes(GENERAL);
    });
    const moved = await api(`/api/console/threads/${source}/teleport`, { destination: { channel: 'team-slack', id: GENERAL } });
    assert.equal(moved.status, 202, moved.text);
    const top = await eventually('the top-level post', () => slack.history(GENERAL).find((m) => m.bot_id === slack.botId && shownText(m).includes(title)));
    assert.equal(top.metadata?.event_type, DELIVERY_EVENT);
    ts = top.ts;
    const [conversation] = JSON.parse((await api(`/api/console/threads/${source}/conversations`)).text) as { moved_to: { thread_id: string } }[];
    landing = conversation!.moved_to.thread_id;
    await eventually('the landed address', async () => {
      const [moved] = JSON.parse((await api(`/api/console/threads/${landing}/conversations`)).text) as { address: { id: string } | null }[];
      return moved?.address?.id === `${GENERAL}:${ts}`;
    });
    // A first reply of alice's, before any kill: it runs (the thread's cursor moves only as the thread is read:
    // a thread never read is read from the bot's first post there, the top-level one).
    const runsBefore = await runsOfLanding();
    await alicePosts('first, before any kill');
    await eventually('the first answer', () => botSaid(0).find((m) => shownText(m).includes('All done here.')));
    await eventually('no turn running', async () => (await running()) === 0);
    assert.equal(await runsOfLanding(), runsBefore + 1);
    assert.equal(slack.history(GENERAL).filter((m) => m.bot_id === slack.botId).length, 1, 'one top-level post');
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
    await slack?.close();
    await db?.end().catch(() => {});
    await scratch?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Settles, then: the text ran as one directive in one more run, and the bot posted exactly one thing in the thread since `mark`. */
  async function once(text: string, runsBefore: number, mark: number): Promise<SlackMessage> {
    await eventually('no turn running', async () => (await running()) === 0);
    await sleep(3_000);
    assert.equal(await directivesWith(text), 1, 'one directive of the message');
    assert.equal(await runsOfLanding(), runsBefore + 1, 'one run');
    const said = botSaid(mark);
    assert.equal(said.length, 1, `one post in the thread: ${JSON.stringify(said.map((m) => shownText(m)))}`);
    assert.deepEqual(await heldClaims(), [], 'no message of the channel left claimed and not done');
    assert.equal(slack.history(GENERAL).filter((m) => m.bot_id === slack.botId).length, 1, 'still one top-level post');
    return said[0]!;
  }

  it('a. a message written while the service was dead is read after the restart and runs once', async () => {
    const text = 'a: written while the service was dead';
    const runsBefore = await runsOfLanding();
    const mark = botReplies().length;
    await kill();
    const posted = await alicePosts(text);
    assert.ok(Number(posted) > Number(await cursor()), 'the message is past the thread\'s cursor');
    const restarted = Date.now();
    const callsBefore = slack.calls.length;
    await start();
    await eventually('the answer in the thread', () => botSaid(mark).find((m) => shownText(m).includes('All done here.')));
    await once(text, runsBefore, mark);
    assert.ok(Number(await cursor()) >= Number(posted), "the thread's cursor moved past the message (read at connect)");
    // Both ways in were taken, and still it ran once: the envelope the local Slack kept, handed to the new socket,
    // and the thread read from its cursor at connect.
    const envelopes = slack.envelopes.filter((e) => e.type === 'events_api' && (e.payload['event'] as { ts?: string }).ts === posted);
    assert.ok(envelopes.some((e) => e.sentAt >= restarted && e.ackedAt !== null), 'the kept envelope was sent after the restart');
    assert.ok(slack.calls.slice(callsBefore).some((c) => c.method === 'conversations.replies' && c.args['ts'] === ts), 'the thread was read at connect');
  });

  it('b. a message claimed but not yet stored when killed is not lost, and runs once after the restart', async () => {
    const text = 'b: claimed just before the kill';
    const runsBefore = await runsOfLanding();
    const mark = botReplies().length;
    // The directive's write waits on the thread's row (writeDirective locks it first): the message is claimed, nothing stored.
    const threadLock = await holding('select id from threads where id = $1 for update', [landing]);
    const posted = await alicePosts(text);
    const [claim] = await eventually('the message claimed', async () => { const held = await heldClaims(); return held.length === 1 && held; });
    assert.ok(claim!.key.endsWith(posted), claim!.key);
    await sleep(500);
    await kill();
    await endOrphans();
    await release(threadLock, 'rollback');
    assert.equal(await directivesWith(text), 0, 'killed before the directive was stored');
    assert.ok(Number(await cursor()) < Number(posted), "the thread's cursor stayed before the message");
    await start();
    // The window the test means: the dead instance's claim still holds when the restarted one is up.
    assert.deepEqual(await heldClaims(), [{ key: claim!.key, live: true }], 'the dead instance\'s claim still holds after the restart');
    await eventually('the answer in the thread', () => botSaid(mark).find((m) => shownText(m).includes('All done here.')), 90_000);
    await once(text, runsBefore, mark);
  });

  it("b'. a message whose turn started, its claim not yet done when killed, runs nothing twice: one error post", async () => {
    const text = "b': [wait] stored just before the kill";
    const runsBefore = await runsOfLanding();
    const mark = botReplies().length;
    const threadLock = await holding('select id from threads where id = $1 for update', [landing]);
    await alicePosts(text);
    const [claim] = await eventually('the message claimed', async () => { const held = await heldClaims(); return held.length === 1 && held; });
    // Its claim's row held: `done` waits once the directive is stored and the turn started.
    const claimLock = await holding("select key from chat_claims where channel = 'team-slack' and key = $1 for update", [claim!.key]);
    await release(threadLock, 'commit');
    await eventually('the turn started', async () => (await directivesWith(text)) === 1 && (await running()) === 1);
    await sleep(500);
    await kill();
    await endOrphans();
    await release(claimLock, 'rollback');
    assert.deepEqual((await heldClaims()).map((c) => c.key), [claim!.key], 'killed with the claim not done');
    await start();
    // The cut turn is swept once its lease lapses; its error line is posted in the thread.
    const failed = await eventually('the error post', () => botSaid(mark).find((m) => shownText(m).startsWith('The turn failed:')), 90_000);
    assert.match(shownText(failed).replace(/\\/g, ''), /turn_lease_expired/);
    // The message is read again once the dead claim lapses: it finds its directive and runs nothing.
    await eventually('the message done', async () => (await heldClaims()).length === 0, 90_000);
    assert.equal(await directivesWith(text), 1, 'read again, it stored no second directive');
    const post = await once(text, runsBefore, mark);
    assert.equal(post.ts, failed.ts);
  });

  it('c. a post in the outbox, not yet posted when killed, is posted once after the restart', async () => {
    const text = 'c: [wait] hold on';
    const stopped = 'The turn was stopped.';
    const runsBefore = await runsOfLanding();
    const mark = botReplies().length;
    await alicePosts(text);
    await eventually('the turn started', async () => (await directivesWith(text)) === 1 && (await running()) === 1);
    // The local Slack away (its sockets cut, its Web API closed): the stop's post waits in the outbox.
    await slack.stop();
    const cancelled = await api(`/api/console/threads/${landing}/cancel`, {});
    assert.equal(cancelled.status, 202, cancelled.text);
    await eventually('the post in the outbox', async () => (await count('select count(*) as n from deliveries where text = $1', [stopped])) === 1);
    await sleep(500);
    assert.equal(botSaid(mark).length, 0, 'nothing posted while Slack was away');
    await kill();
    await slack.start();
    await start();
    await eventually('the stop posted', () => botSaid(mark).some((m) => shownText(m) === stopped), 90_000);
    await eventually('the outbox empty', async () => (await count('select count(*) as n from deliveries', [])) === 0);
    await eventually('no turn running', async () => (await running()) === 0);
    await sleep(3_000);
    const said = botSaid(mark).map((m) => shownText(m));
    assert.equal(said.filter((t) => t === stopped).length, 1, `posted once: ${JSON.stringify(said)}`);
    assert.deepEqual(said, [stopped], 'the one post in the thread');
    assert.equal(await directivesWith(text), 1);
    assert.equal(await runsOfLanding(), runsBefore + 1, 'one run');
  });

  it('d. a post made but not yet answered when killed is not posted again after the restart', async () => {
    const text = 'd: answered just before the kill';
    const runsBefore = await runsOfLanding();
    const mark = botReplies().length;
    // Slack takes the next post at once and never answers it in time: the delivery stays in the outbox, claimed.
    slack.answerLate('chat.postMessage', 1, 120_000);
    await alicePosts(text);
    await eventually('the answer in the thread', () => botSaid(mark).find((m) => shownText(m).includes('All done here.')));
    assert.equal(await count('select count(*) as n from deliveries', []), 1, 'its delivery still in the outbox');
    await sleep(500);
    await kill();
    await start();
    // Its claim lapses (the dead instance's), the restarted one takes it up and finds it posted.
    await eventually('the outbox empty', async () => (await count('select count(*) as n from deliveries', [])) === 0, 90_000);
    await once(text, runsBefore, mark);
  });
});
