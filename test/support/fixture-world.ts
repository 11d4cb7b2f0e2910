import type { World, WorldThread } from '../../domain/world.ts';
import { sha256, testId } from './ids.ts';

/** Ids of the fixture, by name, so tests read like the story they tell. */
export const F = {
  root: testId(1_000),
  rootMsgs: [testId(1_001), testId(1_002), testId(1_003), testId(1_004), testId(1_005)],
  fork: testId(2_000),
  forkMsgs: [testId(2_001), testId(2_002)],
  forkOfFork: testId(3_000),
  forkOfForkMsgs: [testId(3_001)],
  bobThread: testId(4_000),
  bobMsg: testId(4_001),
  shared: testId(5_000),
  conv: testId(6_000),
  conv2: testId(6_001),
  bobConv: testId(6_002),
  runs: [testId(7_001), testId(7_002), testId(7_003)],
  bobRun: testId(7_004),
  modelMsgs: [testId(8_001), testId(8_002), testId(8_003), testId(8_004)],
  pending: testId(9_001),
  question: testId(9_002),
  installation: testId(10_000),
  artifact: testId(10_001),
  installationDisabled: testId(10_002),
  installationUnauthorized: testId(10_003),
  installationBob: testId(10_004),
  artifactDisabled: testId(10_005),
  artifactUnauthorized: testId(10_006),
  artifactForeignInstallation: testId(10_007),
  artifactBob: testId(10_008),
} as const;

const thread = (fields: Partial<WorldThread> & Pick<WorldThread, 'id' | 'owner'>): WorldThread => ({
  key: null,
  channel: 'console',
  members: [],
  project: null,
  title: 'A thread',
  fork_of: null,
  fork_cutoff: null,
  messages: [],
  conversations: [],
  ...fields,
});

/**
 * Two users; alice's thread with five messages, a fork of it cut after the third, and a fork of
 * that fork cut after the fork's first own message; bob's private thread; a thread bob owns and
 * alice is a member of. Conversations, runs, model messages and pending items under alice's thread.
 */
export function fixtureWorld(): World {
  return {
    users: [
      { id: 'alice', name: 'Alice', token_hash: sha256('token-alice'), role: 'admin' },
      { id: 'bob', name: 'Bob', token_hash: sha256('token-bob'), role: 'member' },
    ],
    projects: [{ name: 'acme-web', directory: null, repo: null, base: null }, { name: 'infra', directory: null, repo: null, base: null }],
    agents: [
      {
        id: 'claude',
        models: ['opus', 'sonnet'],
        efforts: ['low', 'high'],
        permission_modes: ['default', 'acceptEdits', 'plan'],
        default_permission_mode: 'default',
        command: null,
      },
      // Served by the demo agent's Codex profile; the world narrows it to no model choice, no effort and two of its modes.
      { id: 'codex', models: [], efforts: [], permission_modes: ['auto', 'read-only'], default_permission_mode: 'auto', command: null,
        env: { DEMO_AGENT_PROFILE: 'codex' } },
    ],
    channels: [
      { id: 'console', kind: 'console', name: 'Console', shared: false, browsable: false, agents: ['claude', 'codex'], defaults: null, linked_users: ['alice', 'bob'], addresses: [] },
      { id: 'quiet', kind: 'chat', name: 'Quiet room', shared: true, browsable: true, agents: [], defaults: null, linked_users: ['alice'],
        addresses: [{ id: 'lobby', name: '#lobby', shared: true, inside: null, barred: null, children: [] }] },
      {
        id: 'team-chat', kind: 'chat', name: 'Team chat', shared: true, browsable: true, agents: ['claude', 'codex'], defaults: null, linked_users: ['alice'],
        addresses: [
          { id: 'general', name: '#general', shared: true, inside: 'general', barred: null,
            children: [{ id: 'general/t1', name: 'Release thread', shared: true, inside: null, barred: null, children: [] }] },
          { id: 'ops', name: '#ops', shared: true, inside: null, barred: 'The agent is not in this room', children: [] },
        ],
      },
    ],
    installations: [
      { id: F.installation, owner: 'alice', provider_name: 'Weather', server_url: 'http://127.0.0.1:1/mcp',
        headers: { Authorization: 'Bearer provider-secret' }, enabled: true, authorized: true },
      { id: F.installationDisabled, owner: 'alice', provider_name: 'Maps', server_url: 'http://127.0.0.1:1/mcp',
        headers: {}, enabled: false, authorized: true },
      { id: F.installationUnauthorized, owner: 'alice', provider_name: 'Charts', server_url: 'http://127.0.0.1:1/mcp',
        headers: {}, enabled: true, authorized: false },
      { id: F.installationBob, owner: 'bob', provider_name: 'Weather', server_url: 'http://127.0.0.1:1/mcp',
        headers: { Authorization: 'Bearer bob-provider-secret' }, enabled: true, authorized: true },
    ],
    artifacts: [
      { id: F.artifact, owner: 'alice', installation: F.installation, resource_uri: 'ui://weather/card', title: 'Forecast',
        tool: 'get_forecast', input: { city: 'Paris' }, output: { content: [{ type: 'text', text: 'Sunny' }] } },
      { id: F.artifactDisabled, owner: 'alice', installation: F.installationDisabled, resource_uri: 'ui://maps/view', title: 'Map',
        tool: 'show_map', input: {}, output: { content: [] } },
      { id: F.artifactUnauthorized, owner: 'alice', installation: F.installationUnauthorized, resource_uri: 'ui://charts/view',
        title: 'Chart', tool: 'chart', input: {}, output: { content: [] } },
      { id: F.artifactForeignInstallation, owner: 'alice', installation: F.installationBob, resource_uri: 'ui://weather/card',
        title: 'Borrowed forecast', tool: 'get_forecast', input: {}, output: { content: [] } },
      { id: F.artifactBob, owner: 'bob', installation: F.installationBob, resource_uri: 'ui://weather/card', title: "Bob's forecast",
        tool: 'get_forecast', input: { city: 'Oslo' }, output: { content: [] } },
    ],
    threads: [
      thread({
        id: F.root, owner: 'alice', project: 'acme-web', title: 'Fix the build',
        messages: F.rootMsgs.map((id, i) => ({ id, role: i % 2 === 0 ? 'user' : 'assistant', text: `root ${i}`, artifact_id: i === 1 || i === 4 ? F.artifact : null })),
        conversations: [
          { id: F.conv, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false,
            pending: [
              { id: F.pending, kind: 'approval', run_id: F.runs[2], title: 'Run tests?', options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }, { id: 'deny', name: 'Deny', kind: 'reject_once' }],
                tool_call: { id: 'call-1', title: 'Run tests?', kind: 'execute', rawInput: { command: 'npm test' } } },
              { id: F.question, kind: 'question', run_id: null, title: 'Which branch?', options: [], tool_call: null },
            ],
            runs: [
              { id: F.runs[0], directory: '/srv/acme', status: 'succeeded', error: null, ended_at: '2026-01-01T00:10:00.000Z',
                model_messages: F.modelMsgs.map((id, i) => ({ id, role: i % 2 === 0 ? 'user' : 'assistant', content: `step ${i}` })) },
              { id: F.runs[1], directory: '/srv/acme', status: 'failed', error: 'agent crashed', ended_at: '2026-01-01T00:20:00.000Z', model_messages: [] },
              { id: F.runs[2], directory: null, status: 'running', error: null, ended_at: null, model_messages: [] },
            ] },
          { id: F.conv2, agent: 'codex', model: null, permission_mode: null, effort: null, address: { channel: 'console', id: F.root }, turn_running: true, pending: [], runs: [] },
        ],
      }),
      thread({
        id: F.fork, owner: 'alice', title: 'Fork', fork_of: F.root, fork_cutoff: F.rootMsgs[2],
        messages: F.forkMsgs.map((id, i) => ({ id, role: 'user', text: `fork ${i}`, artifact_id: null })),
      }),
      thread({
        id: F.forkOfFork, owner: 'alice', title: 'Fork of fork', fork_of: F.fork, fork_cutoff: F.forkMsgs[0],
        messages: F.forkOfForkMsgs.map((id) => ({ id, role: 'user', text: 'fork of fork', artifact_id: null })),
      }),
      thread({
        id: F.bobThread, owner: 'bob', title: 'Bob alone', project: 'infra',
        messages: [{ id: F.bobMsg, role: 'user', text: 'private', artifact_id: F.artifact }],
        conversations: [
          { id: F.bobConv, agent: 'claude', model: 'sonnet', permission_mode: 'plan', effort: 'high', address: null, turn_running: false, pending: [],
            runs: [{ id: F.bobRun, directory: '/srv/bob', status: 'succeeded', error: null, ended_at: null, model_messages: [] }] },
        ],
      }),
      thread({ id: F.shared, owner: 'bob', members: ['alice'], key: testId(5_500), title: 'Shared with alice' }),
    ],
  };
}
