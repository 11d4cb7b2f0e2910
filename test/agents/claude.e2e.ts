import assert from 'node:assert/strict';
import { startFakeAnthropicModel } from './fakes/anthropic-messages.ts';
import { describeRealAgent, freshDir } from './scenarios.ts';

const KEY = 'fake-anthropic-key-for-loopback';

describeRealAgent({
  name: 'claude',
  // Claude Code looks up a public host name (a plugin blocklist) even with non-essential traffic off.
  skip:
    process.env.AGENT_TIER_NETNS === '1'
      ? false
      : 'Claude Code looks up a public host on its own, so it runs only in a network namespace with loopback alone (npm run test:agents as root, where unshare -n works)',
  startFake: () => startFakeAnthropicModel(),
  worldAgent: (fake, scratch, argv) => ({
    id: 'claude',
    command: argv,
    env: {
      ANTHROPIC_BASE_URL: fake.url,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      HOME: freshDir(scratch, 'claude-home'),
    },
    env_pass: ['ANTHROPIC_API_KEY'],
    // What 0.101.0 advertises (the service learns them from the agent: these narrow nothing once it does).
    models: ['default', 'opus', 'sonnet', 'haiku'],
    efforts: [],
    permission_modes: ['default', 'acceptEdits', 'plan', 'auto'],
    default_permission_mode: 'default',
  }),
  serviceEnv: { ANTHROPIC_API_KEY: KEY },
  askingMode: 'default',
  freeMode: 'acceptEdits',
  // `allow` up to 0.23, `allow-once` since.
  allowOption: (options) => options.find((option) => option.kind === 'allow_once'),
  rejectOption: (options) => options.find((option) => option.id === 'reject'),
  refusedEnd: 'run_finished',
  secret: KEY,
  checkRequests: (fake) => {
    for (const request of fake.requests.filter((r) => r.method === 'POST')) assert.equal(request.headers['x-api-key'], KEY, `${request.method} ${request.url}`);
  },
  turnMs: 60_000,
});
