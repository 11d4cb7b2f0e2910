import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startService, type TestService } from '../support/service.ts';

describe('GET /api/artifacts/config', () => {
  let service: TestService;
  before(async () => {
    service = await startService({ ARTIFACT_VIEWER_PATH: '/view/artifacts' });
  });
  after(() => service.close());

  it('answers the public routing settings, never cached', async () => {
    const res = await service.ask({ path: '/api/artifacts/config', headers: { host: `localhost:${service.port}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), {
      viewer_origin: `http://localhost:${service.port}`,
      sandbox_origin: `http://sandbox.localhost:${service.port}`,
      path: '/view/artifacts',
    });
  });

  it('runs the browser-request check: cross-site, foreign Origin and navigation are 403, never cached', async () => {
    const host = `localhost:${service.port}`;
    for (const headers of <Record<string, string>[]>[
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://evil.example' },
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' },
    ]) {
      const res = await service.ask({ path: '/api/artifacts/config', headers: { host, ...headers } });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    for (const headers of <Record<string, string>[]>[
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', origin: `http://${host}` },
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'cors' },
      {},
    ]) {
      const res = await service.ask({ path: '/api/artifacts/config', headers: { host, ...headers } });
      assert.equal(res.status, 200, JSON.stringify(headers));
    }
  });

  it('an unknown artifact path is a 404 problem, never cached', async () => {
    const res = await service.ask({ path: '/api/artifacts/nothing/here' });
    assert.equal(res.status, 404);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('405 with Allow for a write', async () => {
    const res = await service.ask({ method: 'POST', path: '/api/artifacts/config' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
  });
});

describe('GET /api/artifacts/config with no origins configured', () => {
  let service: TestService;
  before(async () => {
    service = await startService({ ARTIFACT_SANDBOX_ORIGIN: '', ARTIFACT_VIEWER_ORIGIN: '' });
  });
  after(() => service.close());

  it('answers null origins', async () => {
    const res = await service.ask({ path: '/api/artifacts/config' });
    assert.deepEqual(res.json(), { viewer_origin: null, sandbox_origin: null, path: '/artifacts' });
  });

  it('serves no sandbox anywhere', async () => {
    const res = await service.ask({ path: '/artifacts/sandbox.js', headers: { host: `sandbox.localhost:${service.port}` } });
    assert.equal(res.status, 404);
  });
});
