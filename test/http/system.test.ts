import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { startService, type TestService } from '../support/service.ts';

describe('health, readiness and the API description', () => {
  let service: TestService;
  let storageUp = true;
  before(async () => {
    service = await startService({}, { storage: { ...createMemoryStorage(), ready: async () => storageUp } });
  });
  after(() => service.close());

  it('GET /healthz is 200 while the process serves', async () => {
    const res = await service.ask({ path: '/healthz' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  });

  it('GET /readyz follows storage', async () => {
    storageUp = true;
    assert.equal((await service.ask({ path: '/readyz' })).status, 200);
    storageUp = false;
    const down = await service.ask({ path: '/readyz' });
    assert.equal(down.status, 503);
    assert.equal(down.headers['content-type'], 'application/problem+json');
    storageUp = true;
  });

  it('GET /api/openapi.json describes every route in OpenAPI 3.1', async () => {
    const res = await service.ask({ path: '/api/openapi.json' });
    assert.equal(res.status, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/healthz', '/readyz', '/api/openapi.json', '/api/artifacts/config', '/artifacts/sandbox', '/artifacts/sandbox.js']) {
      assert.ok(doc.paths[path]?.get, path);
    }
    const policy = doc.paths['/artifacts/sandbox'].get.parameters.find((p: { name: string }) => p.name === 'policy');
    assert.equal(policy.in, 'query');
    assert.equal(policy.required, true);
    assert.equal(policy.schema.type, 'string');
  });
});
