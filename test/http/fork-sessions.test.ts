// A fork's agent session (issue 39, contract section 11), over HTTP on memory storage with the bundled demo agent
// keeping its sessions on disk and offering ACP `session/fork`: a fork at the source's latest message continues a
// copy of the source's session (no brief); a fork at an earlier message, or one whose source moved on before its
// first turn, starts a new session briefed up to the cutoff, as with an agent that offers no fork.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { idleThread } from '../support/http.ts';
import { testId } from '../support/ids.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { serviceKeepingSessions } from '../support/kept-sessions.ts';
import type { TestService } from '../support/service.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const asleep = (n: number) => (events: readonly WireEvent[]) => events.filter((e) => e.type === 'reflex_asleep').length >= n;
const saidIn = (events: readonly WireEvent[]) => events.filter((e) => e.type === 'message' && typeof e.data.delta === 'string').map((e) => e.data.delta).join('');

describe("a fork's agent session (ACP session/fork where the agent offers it)", () => {
  let service: TestService;
  before(async () => {
    service = await serviceKeepingSessions();
  });
  after(() => service.close());

  const get = (path: string) => service.ask({ path, headers: ALICE });
  const post = (path: string, body: unknown) => service.ask({ method: 'POST', path, headers: ALICE, body: JSON.stringify(body) });
  /** A thread's ledger, newest first. */
  const ledger = async (thread: string): Promise<{ id: string; role: string; text: string }[]> => (await get(`${P}/${thread}/messages?limit=200`)).json().items;
  /** Alice's new thread after `n` turns of the demo agent (the session's turn count reaches `n`). */
  const source = async (n: number): Promise<string> => {
    const first = await post(`${P}/${testId(39_500 + Math.floor(Math.random() * 400))}/directives`, { text: 'Step 1', model: 'claude:opus' });
    assert.equal(first.status, 202, first.text);
    const id = first.json().thread_id as string;
    await idleThread(service.port, id, ALICE);
    for (let i = 2; i <= n; i += 1) {
      assert.equal((await post(`${P}/${id}/directives`, { text: `Step ${i}` })).status, 202);
      await idleThread(service.port, id, ALICE);
    }
    return id;
  };
  /** What the demo agent said in a thread's first turn. */
  const firstTurn = async (thread: string): Promise<string> => {
    const socket = (await connectLive(service.port, { thread, after: '0' }, { authorization: ALICE.authorization! })) as LiveClient;
    const said = saidIn(await socket.until(asleep(1)));
    socket.close();
    return said;
  };

  it("at the source's latest message: the fork's agent continues a copy of the source's session, with no brief", async () => {
    const src = await source(2);
    const [latest] = await ledger(src);
    const res = await post(`${P}/${src}/fork`, { message_id: latest!.id, text: 'Go on from here' });
    assert.equal(res.status, 201, res.text);
    const fork = res.json().thread_id as string;
    const said = await firstTurn(fork);
    assert.match(said, /Working on: Go on from here/);
    assert.match(said, /turn=3 /, `the session is the source's, two turns in: ${said}`);
    assert.doesNotMatch(said, /\[demo\] history=/, 'no brief went with the prompt');
    const lines = (await ledger(fork)).map((m) => `${m.role}: ${m.text}`);
    assert.ok(lines.some((line) => line.startsWith("system: This thread is a fork: its agent continues a copy")), lines.join(' | '));
    assert.ok(!lines.some((line) => line.includes('from a brief')), 'no brief is claimed');
    // The source's own session goes on as it was: its next turn is its third.
    assert.equal((await post(`${P}/${src}/directives`, { text: 'Step 3' })).status, 202);
    await idleThread(service.port, src, ALICE);
    assert.match((await ledger(src)).find((m) => m.role === 'assistant')!.text, /turn=3 /);
  });

  it('at an earlier message, or when the source moved on before the fork first ran: a new session briefed up to the cutoff', async () => {
    const src = await source(2);
    const messages = await ledger(src);
    const earlier = messages.find((m) => m.text === 'Step 1')!;
    const res = await post(`${P}/${src}/fork`, { message_id: earlier.id, text: 'Another way' });
    assert.equal(res.status, 201, res.text);
    const said = await firstTurn(res.json().thread_id);
    assert.match(said, /\[demo\] history=1 latest="\[user\] Step 1"/, `briefed up to the cutoff: ${said}`);
    assert.match(said, /turn=1 /, 'a new session');

    // Forked at the latest message, but the source runs another turn before the fork's first: the copy would hold it.
    const idle = await post(`${P}/${src}/fork`, { message_id: messages[0]!.id });
    assert.equal(idle.status, 201, idle.text);
    assert.equal((await post(`${P}/${src}/directives`, { text: 'Step 3' })).status, 202);
    await idleThread(service.port, src, ALICE);
    const later = idle.json().thread_id as string;
    assert.equal((await post(`${P}/${later}/directives`, { text: 'Now go' })).status, 202);
    const briefed = await firstTurn(later);
    assert.match(briefed, /\[demo\] history=\d+ /, `briefed: ${briefed}`);
    assert.match(briefed, /turn=1 /);
    assert.doesNotMatch(briefed, /Step 3/, 'nothing past the cutoff');
  });
});
