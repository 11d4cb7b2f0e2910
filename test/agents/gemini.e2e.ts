import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeGeminiModel } from './fakes/gemini-generate.ts';
import { describeRealAgent, freshDir } from './scenarios.ts';

const KEY = 'fake-gemini-key-for-loopback';

describeRealAgent({
  name: 'gemini',
  skip: false,
  startFake: () => startFakeGeminiModel(),
  worldAgent: (fake, scratch, argv) => {
    const home = freshDir(scratch, 'gemini-home');
    mkdirSync(join(home, '.gemini'));
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify({
        security: { auth: { selectedType: 'gemini-api-key' } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      }),
    );
    return {
      id: 'gemini',
      command: argv,
      env: { GOOGLE_GEMINI_BASE_URL: fake.url, GEMINI_CLI_TRUST_WORKSPACE: 'true', HOME: home },
      env_pass: ['GEMINI_API_KEY'],
      models: [],
      efforts: [],
      permission_modes: ['default', 'autoEdit', 'yolo', 'plan'],
      default_permission_mode: 'default',
    };
  },
  serviceEnv: { GEMINI_API_KEY: KEY },
  askingMode: 'default',
  freeMode: 'yolo',
  allowOption: (options) => options.find((option) => option.id === 'proceed_once'),
  rejectOption: (options) => options.find((option) => option.id === 'cancel'),
  refusedEnd: 'run_finished',
  secret: KEY,
  checkRequests: (fake) => {
    for (const request of fake.requests) assert.equal(request.headers['x-goog-api-key'], KEY, `${request.method} ${request.url}`);
  },
  turnMs: 60_000,
});
