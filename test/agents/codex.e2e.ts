import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeCodexModel } from './fakes/codex-responses.ts';
import { describeRealAgent, freshDir } from './scenarios.ts';

// Codex reads its key from the variable its provider names (`env_key`): the service passes it
// through by name (`env_pass`), and the fake checks every request carries it.
const KEY = 'fake-codex-key-for-loopback';

describeRealAgent({
  name: 'codex',
  skip: false,
  required: true,
  startFake: () => startFakeCodexModel(),
  worldAgent: (fake, scratch, argv) => {
    const codexHome = freshDir(scratch, 'codex-home');
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        // Not in Codex 0.166's own catalog: its adapter lists it first among the models (the service's default route),
        // and Codex offers it `exec_command` but no apply_patch tool, so the fake's edits are `apply_patch` run through it
        // (which Codex intercepts as an edit: "Edit files", with the diff). With `gpt-5.5`, of its catalog, the service's
        // default route became the catalog's first model, `gpt-6.1-sol`, whose requests offered no tools at all.
        'model = "gpt-5.4"',
        'model_provider = "fake"',
        '',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "${fake.url}/v1"`,
        'wire_api = "responses"',
        'env_key = "CODEX_FAKE_API_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
    );
    return {
      id: 'codex',
      command: argv,
      env: { CODEX_HOME: codexHome, HOME: freshDir(scratch, 'codex-user-home') },
      env_pass: ['CODEX_FAKE_API_KEY'],
      models: [],
      efforts: [],
      permission_modes: ['read-only', 'workspace-write', 'agent', 'agent-full-access'],
      default_permission_mode: 'read-only',
    };
  },
  serviceEnv: { CODEX_FAKE_API_KEY: KEY },
  askingMode: 'read-only',
  freeMode: 'agent-full-access',
  allowOption: (options) => options.find((option) => option.id === 'allow_once'),
  rejectOption: (options) => options.find((option) => option.id === 'cancel'),
  refusedEnd: 'run_cancelled',
  secret: KEY,
  checkRequests: (fake) => {
    for (const request of fake.requests) assert.equal(request.headers.authorization, `Bearer ${KEY}`, `${request.method} ${request.url}`);
  },
  turnMs: 30_000,
});
