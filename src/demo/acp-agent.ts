/**
 * The bundled demo agent: a small, deterministic Agent Client Protocol agent over stdio, run as
 * `node --import tsx src/demo/acp-agent.ts`. It offers modes and model/effort config options, and
 * states the session's posture in every reply, so tests and demos can see the posture arrive.
 * What it offers is its profile's (`DEMO_AGENT_PROFILE`, see `agent-profiles.ts`; `claude` by
 * default); `DEMO_AGENT_REFUSE` (comma-separated) names values it advertises but refuses to be set
 * to, as a real agent may (Claude Code refuses `bypassPermissions` as root).
 *
 * Prompt markers: `[approval]` proposes an edit (a tool call of kind `edit` with a diff, its
 * location and raw input), asks permission for it, and writes `notes.md` in the session's directory
 * when allowed; `[fail]` answers the prompt with a JSON-RPC
 * error; `[crash]` exits with status 1 after the first chunk; `[slow]` waits between chunks;
 * `[wait]` sends nothing more until the turn is cancelled (`session/cancel`); `[hang]` sends
 * nothing more and ignores cancel too; `[garbled]` sends a NUL and a surrogate pair split across
 * two chunks, in text and in a tool call's title; `[env]` names the environment variables it got;
 * `[stderr]` writes its whole environment to stderr (what a careless agent may do); `[leak]` prints
 * its environment's values in a reply and a tool call's output (what `env` run by an agent does);
 * `[big]` sends a tool call whose output is 2 MB and a 100 KB diff; `[narrow]` narrows the session's effort
 * option to its current effort (`config_option_update`), as Codex does when its model changes. With
 * `DEMO_AGENT_REQUIRE_AUTH` set it offers an auth method and answers `session/new` with
 * `auth_required`, as an agent without credentials does. With `DEMO_AGENT_RESUME` naming a directory it
 * keeps each session there (posture and turn count) and offers `session/resume` (ACP
 * `sessionCapabilities.resume`), so a session outlives the process, as Claude Code's do, and `session/fork`
 * (`sessionCapabilities.fork`: a new session copied from a kept one, turn count included, in the fork's `cwd`); a
 * thread's fresh session is prefixed with the history brief, and it says how much history it got.
 *
 * Steering (a profile's `steering`, contract section 11): it advertises `_meta.steering.supported` and takes
 * `_session/steering` while a turn of the session runs (`injected`), else answers `promptRequired`; each steered
 * text is said in the turn's reply (`Steered: <text>`). `[await-steer]` holds the turn until a steer arrives (or a
 * cancel); `[steer-late]` answers steers `promptRequired` as if the turn had just ended, and ends it once one came.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { DEFAULT_DEMO_PROFILE, DEMO_PROFILES } from './agent-profiles.ts';
import { HISTORY_FOOTER, HISTORY_HEADER } from '../../domain/history-brief.ts';

interface DemoSession {
  mode: string;
  model: string;
  effort: string;
  turns: number;
}

const profileName = process.env.DEMO_AGENT_PROFILE ?? DEFAULT_DEMO_PROFILE;
const profile = DEMO_PROFILES[profileName];
if (profile === undefined) {
  process.stderr.write(`unknown DEMO_AGENT_PROFILE ${profileName}\n`);
  process.exit(2);
}
const MODES = profile.modes.map((id) => ({ id, name: id }));
const MODELS = [...profile.models];
const EFFORTS = [...profile.efforts];
const REFUSED = new Set((process.env.DEMO_AGENT_REFUSE ?? '').split(',').filter((value) => value !== ''));

const sessions = new Map<string, DemoSession>();
/** Each session's working directory (its `cwd`). */
const directories = new Map<string, string>();
/** Where sessions are kept across processes when `session/resume` is offered (null: not offered). */
const resumeDir = process.env.DEMO_AGENT_RESUME || null;
const sessionFile = (sessionId: string) => join(resumeDir!, `${sessionId.replace(/[^A-Za-z0-9-]/g, '_')}.json`);

/** Keeps a session where a later process can resume it. */
async function keep(sessionId: string): Promise<void> {
  if (resumeDir === null) return;
  await mkdir(resumeDir, { recursive: true });
  await writeFile(sessionFile(sessionId), JSON.stringify({ session: sessions.get(sessionId), cwd: directories.get(sessionId) }));
}

/** A session kept by {@link keep}, or the error of one that is not. */
async function kept(sessionId: string): Promise<DemoSession> {
  const text = await readFile(sessionFile(sessionId), 'utf8').catch(() => null);
  if (text === null) throw acp.RequestError.resourceNotFound(sessionId);
  return (JSON.parse(text) as { session: DemoSession }).session;
}

/** `session/fork`'s params as this agent reads them. */
function forkParams(raw: unknown): { sessionId: string; cwd: string } {
  const params = (raw ?? {}) as { sessionId?: unknown; cwd?: unknown };
  if (typeof params.sessionId !== 'string' || typeof params.cwd !== 'string') throw acp.RequestError.invalidParams(undefined, 'session/fork needs a sessionId and a cwd');
  return { sessionId: params.sessionId, cwd: params.cwd };
}

/** The `[wait]` turns, each ended by its session's `session/cancel`. */
const cancels = new Map<string, () => void>();

/** A session's running turn, as a steer sees it: the texts steered into it, and who waits for the next one. */
interface RunningTurn {
  readonly steered: string[];
  /** `[steer-late]`: steers are answered `promptRequired`, as if the turn had just ended. */
  late: boolean;
  wake: () => void;
}
const running = new Map<string, RunningTurn>();
/** Resolves at the turn's next steer (or its cancel). */
const nextSteer = (turn: RunningTurn) => new Promise<void>((resolve) => (turn.wake = resolve));

/** A session's config options; `efforts` narrows its effort option (as Codex's does to what its model supports). */
function configOptions(session: DemoSession, efforts: readonly string[] = EFFORTS): acp.SessionConfigOption[] {
  const select = (id: string, name: string, category: string | null, currentValue: string, values: readonly string[]): acp.SessionConfigOption => ({
    id, name, type: 'select', currentValue, options: values.map((value) => ({ value, name: value })), ...(category === null ? {} : { category }),
  });
  const options = [
    select('model', 'Model', 'model', session.model, MODELS),
    select(profile!.effortOption.id, 'Effort', profile!.effortOption.category, session.effort, efforts),
  ];
  return profile!.modeOption ? [select('mode', 'Mode', 'mode', session.mode, MODES.map((mode) => mode.id)), ...options] : options;
}

function sessionOf(sessionId: string): DemoSession {
  const session = sessions.get(sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(sessionId);
  return session;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function prompt({ params, client }: acp.AgentRequestContext<acp.PromptRequest>): Promise<acp.PromptResponse> {
  const session = sessionOf(params.sessionId);
  session.turns += 1;
  await keep(params.sessionId);
  const sent = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
  // A fresh session of a thread with a past starts from the history brief: the markers below are the new message's only.
  const briefEnd = sent.startsWith(HISTORY_HEADER) ? sent.indexOf(HISTORY_FOOTER) : -1;
  const history = briefEnd < 0 ? [] : sent.slice(HISTORY_HEADER.length, briefEnd).split('\n').filter((line) => /^\[[a-z]+\] /.test(line));
  const text = briefEnd < 0 ? sent : sent.slice(briefEnd + HISTORY_FOOTER.length).trim();
  const slow = text.includes('[slow]');
  const update = async (update: acp.SessionUpdate) => {
    await client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update });
    if (slow) await sleep(300);
  };
  const say = (words: string) => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: words } });
  const turn: RunningTurn = { steered: [], late: text.includes('[steer-late]'), wake: () => {} };
  running.set(params.sessionId, turn);
  try {
    return await promptTurn(params.sessionId, session, text, history, turn, update, say, client);
  } finally {
    running.delete(params.sessionId);
  }
}

async function promptTurn(
  sessionId: string, session: DemoSession, text: string, history: string[], turn: RunningTurn,
  update: (update: acp.SessionUpdate) => Promise<void>, say: (words: string) => Promise<void>, client: acp.AgentRequestContext<acp.PromptRequest>['client'],
): Promise<acp.PromptResponse> {
  const params = { sessionId };
  await say(`Working on: ${text}\n`);
  if (text.includes('[await-steer]') || turn.late) {
    const steered = nextSteer(turn);
    cancels.set(sessionId, () => turn.wake());
    await steered;
    cancels.delete(sessionId);
  }
  if (history.length > 0) await say(`[demo] history=${history.length} latest=${JSON.stringify(history.at(-1))}\n`);
  if (session.turns === 1) {
    await update({ sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'review', description: 'Review the changes so far', input: { hint: 'what to look at' } }] });
  }
  if (text.includes('[crash]')) process.exit(1);
  if (text.includes('[narrow]')) await update({ sessionUpdate: 'config_option_update', configOptions: configOptions(session, [session.effort]) });
  if (text.includes('[stderr]')) process.stderr.write(`environment: ${JSON.stringify(process.env)}\n`);
  if (text.includes('[env]')) await say(`[demo-env] ${Object.keys(process.env).sort().join(',')}\n`);
  if (text.includes('[leak]')) {
    const values = Object.values(process.env).join(' ');
    await say(`[demo-leak] ${values}\n`);
    await update({ sessionUpdate: 'tool_call', toolCallId: `leak-${session.turns}`, title: 'Run env', kind: 'execute', status: 'completed', rawOutput: { stdout: values } });
  }
  if (text.includes('[big]')) {
    await update({
      sessionUpdate: 'tool_call', toolCallId: `big-${session.turns}`, title: 'Print a large file', kind: 'read', status: 'completed',
      content: [{ type: 'diff', path: 'big.txt', oldText: null, newText: 'y'.repeat(100_000) }],
      rawOutput: { stdout: 'x'.repeat(2_000_000) },
    });
  }
  if (text.includes('[hang]')) await new Promise(() => {});
  if (text.includes('[wait]')) {
    await new Promise<void>((resolve) => cancels.set(params.sessionId, resolve));
    return { stopReason: 'cancelled' };
  }
  if (text.includes('[garbled]')) {
    // U+1F600 as two UTF-16 code units, each in its own chunk, and NULs the database cannot store.
    await say('split \ud83d');
    await say('\ude00 pair, a NUL \u0000 here\n');
    await update({ sessionUpdate: 'tool_call', toolCallId: `nul-${session.turns}`, title: 'bad \u0000 title \udc00', kind: 'other', status: 'completed' });
  }
  if (text.includes('[fail]')) throw acp.RequestError.internalError(undefined, 'the demo agent was asked to fail');
  await update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'Considering the request.' } });
  await update({ sessionUpdate: 'plan', entries: [{ content: 'Answer the prompt', priority: 'medium', status: 'in_progress' }] });
  const toolCallId = `call-${session.turns}`;
  await update({ sessionUpdate: 'tool_call', toolCallId, title: 'Look around the workspace', kind: 'read', status: 'pending' });
  if (text.includes('[approval]')) {
    // As Claude Code proposes a Write: the edit tool call with its diff, then the ask about it.
    const path = join(directories.get(params.sessionId) ?? process.cwd(), 'notes.md');
    const oldText = await readFile(path, 'utf8').catch(() => null);
    const newText = `${oldText ?? '# Notes\n'}- ${text.replace(/\s+/g, ' ').trim()}\n`;
    const edit: acp.ToolCall = {
      toolCallId: `edit-${session.turns}`, title: `Write ${path}`, kind: 'edit', status: 'pending',
      content: [{ type: 'diff', path, oldText, newText }],
      locations: [{ path, line: 1 }],
      rawInput: { file_path: path, content: newText },
    };
    await update({ sessionUpdate: 'tool_call', ...edit });
    const answer = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: params.sessionId,
      toolCall: edit,
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
    });
    await say(answer.outcome.outcome === 'selected' ? `Permission: ${answer.outcome.optionId}.\n` : 'Permission: cancelled.\n');
    if (answer.outcome.outcome === 'selected' && answer.outcome.optionId === 'allow') {
      await writeFile(path, newText);
      await update({ sessionUpdate: 'tool_call_update', toolCallId: edit.toolCallId, status: 'completed', rawOutput: { bytes: Buffer.byteLength(newText) } });
    } else {
      await update({ sessionUpdate: 'tool_call_update', toolCallId: edit.toolCallId, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'The user refused the edit.' } }] });
    }
  }
  await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' });
  for (const word of ['All ', 'done ', 'here.\n']) await say(word);
  // One line a test can parse: the posture that arrived, and counters that show session reuse.
  await say(`[demo] mode=${session.mode} model=${session.model} effort=${session.effort} turn=${session.turns} sessions=${sessions.size} pid=${process.pid}\n`);
  await update({ sessionUpdate: 'usage_update', used: 1200 * session.turns, size: 200_000, cost: { amount: 0.01 * session.turns, currency: 'USD' } });
  // The turn is over for steering from here (a later steer is answered `promptRequired`): each one it took is said.
  turn.late = true;
  for (const steered of turn.steered) await say(`Steered: ${steered}\n`);
  return { stopReason: 'end_turn' };
}

/** `_session/steering`'s params as this agent reads them: the text of its prompt, and whether an idle session answers `promptRequired`. */
function steerParams(raw: unknown): { sessionId: string; text: string } {
  const params = (raw ?? {}) as { sessionId?: unknown; prompt?: unknown };
  if (typeof params.sessionId !== 'string' || !Array.isArray(params.prompt) || params.prompt.length === 0) throw acp.RequestError.invalidParams(undefined, 'steer params need a sessionId and a prompt');
  const text = (params.prompt as { type?: unknown; text?: unknown }[]).map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
  return { sessionId: params.sessionId, text };
}

const app = acp
  .agent({ name: 'demo-agent' })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    ...(profile.steering ? { _meta: { steering: { supported: true } } } : {}),
    agentCapabilities: { loadSession: false, ...(resumeDir === null ? {} : { sessionCapabilities: { resume: {}, fork: {} } }) },
    agentInfo: { name: 'demo-agent', version: '0.1.0' },
    authMethods: process.env.DEMO_AGENT_REQUIRE_AUTH ? [{ id: 'demo-login', name: 'Log in to the demo', description: 'Secret words <b>here</b>' }] : [],
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = randomUUID();
    if (process.env.DEMO_AGENT_REQUIRE_AUTH) throw acp.RequestError.authRequired(undefined, 'Please run /login: the provider said {"error":"invalid x-api-key"}');
    directories.set(sessionId, params.cwd);
    const session: DemoSession = { mode: MODES[0]!.id, model: MODELS[0]!, effort: EFFORTS[0]!, turns: 0 };
    sessions.set(sessionId, session);
    return { sessionId, modes: { currentModeId: session.mode, availableModes: MODES }, configOptions: configOptions(session) };
  })
  .onRequest(acp.methods.agent.session.resume, async ({ params }) => {
    if (resumeDir === null) throw acp.RequestError.methodNotFound('session/resume');
    const session = await kept(params.sessionId);
    sessions.set(params.sessionId, session);
    directories.set(params.sessionId, params.cwd);
    return { modes: { currentModeId: session.mode, availableModes: MODES }, configOptions: configOptions(session) };
  })
  .onRequest<{ sessionId: string; cwd: string }, acp.NewSessionResponse>('session/fork', forkParams, async ({ params }) => {
    if (resumeDir === null) throw acp.RequestError.methodNotFound('session/fork');
    const source = sessions.get(params.sessionId) ?? (await kept(params.sessionId));
    const sessionId = randomUUID();
    const session: DemoSession = { ...source };
    sessions.set(sessionId, session);
    directories.set(sessionId, params.cwd);
    await keep(sessionId);
    return { sessionId, modes: { currentModeId: session.mode, availableModes: MODES }, configOptions: configOptions(session) };
  })
  .onRequest(acp.methods.agent.session.setMode, async ({ params, client }) => {
    if (!MODES.some((mode) => mode.id === params.modeId)) throw acp.RequestError.invalidParams(undefined, `unknown mode ${params.modeId}`);
    if (REFUSED.has(params.modeId)) throw acp.RequestError.invalidParams(undefined, `the demo agent refuses mode ${params.modeId}`);
    const session = sessionOf(params.sessionId);
    session.mode = params.modeId;
    // Codex tells of a mode change through its config options.
    if (profile!.modeOption) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'config_option_update', configOptions: configOptions(session) },
      });
    }
  })
  .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
    const session = sessionOf(params.sessionId);
    const value = String(params.value);
    if (REFUSED.has(value)) throw acp.RequestError.invalidParams(undefined, `the demo agent refuses ${params.configId}=${value}`);
    if (params.configId === 'model' && MODELS.includes(value)) session.model = value;
    else if (params.configId === profile!.effortOption.id && EFFORTS.includes(value)) session.effort = value;
    else if (params.configId === 'mode' && profile!.modeOption && MODES.some((mode) => mode.id === value)) session.mode = value;
    else throw acp.RequestError.invalidParams(undefined, `unknown option ${params.configId}=${value}`);
    return { configOptions: configOptions(session) };
  })
  .onRequest(acp.methods.agent.session.prompt, prompt)
  .onRequest<{ sessionId: string; text: string }, { outcome: string }>('_session/steering', steerParams, ({ params }) => {
    if (!profile!.steering) throw acp.RequestError.methodNotFound('_session/steering');
    sessionOf(params.sessionId);
    const turn = running.get(params.sessionId);
    if (turn === undefined || turn.late) {
      turn?.wake();
      return { outcome: 'promptRequired' };
    }
    turn.steered.push(params.text);
    turn.wake();
    return { outcome: 'injected' };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    cancels.get(params.sessionId)?.();
    cancels.delete(params.sessionId);
  });

// Node's web streams and the DOM lib's are the same objects with slightly different typings.
const input = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), input));
// The client closing stdin ends the connection; nothing else keeps the agent alive.
await connection.closed;
process.exit(0);
