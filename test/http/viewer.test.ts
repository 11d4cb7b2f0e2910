import assert from 'node:assert/strict';
import { Script } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { viewerPage } from '../../src/viewer/routes.ts';
import { testId } from '../support/ids.ts';
import { startService, type TestService } from '../support/service.ts';

const ARTIFACT = testId(42);

/** The viewer page's CSP, spelled out so a change to it is a deliberate change to this test. */
const csp = (frameSrc: string): string =>
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  `connect-src 'self'; frame-src ${frameSrc}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

describe('the artifact viewer page and script', () => {
  let service: TestService;
  before(async () => {
    service = await startService();
  });
  after(() => service.close());

  it('serves the page at viewer_path with its headers and a CSP framing the sandbox origin only', async () => {
    const res = await service.ask({ path: `/artifacts/${ARTIFACT}` });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['content-security-policy'], csp(`http://sandbox.localhost:${service.port}`));
    assert.match(res.text, new RegExp(`<html lang="en" data-artifact-id="${ARTIFACT}" data-state="loading" data-display="inline">`));
    assert.match(res.text, /<script src="\/assets\/viewer\.js" defer><\/script>/);
    assert.equal(res.text.match(/<script/g)?.length, 1, 'one script element, and it has a src: no inline script');
  });

  it('writes the id in lower case, as ids are stored', async () => {
    const res = await service.ask({ path: `/artifacts/${ARTIFACT.toUpperCase()}` });
    assert.equal(res.status, 200);
    assert.match(res.text, new RegExp(`data-artifact-id="${ARTIFACT}"`));
  });

  it('escapes the id for its attribute', () => {
    const page = viewerPage(`"><script>alert('x')</script>&`);
    assert.match(page, /data-artifact-id="&quot;&gt;&lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;&amp;"/);
    assert.equal(page.match(/<script/g)?.length, 1);
  });

  it('answers the not-found problem for an id that is not a UUID, or a path under one', async () => {
    const paths = ['/artifacts/not-a-uuid', `/artifacts/${ARTIFACT}x`, `/artifacts/${ARTIFACT}/more`, '/artifacts/', '/assets/other.js'];
    for (const path of paths) {
      const res = await service.ask({ path });
      assert.equal(res.status, 404, path);
      assert.equal(res.headers['content-type'], 'application/problem+json', path);
      assert.equal(res.json().detail, 'Nothing is served at this path', path);
    }
  });

  it('answers 405 with Allow for another method', async () => {
    const res = await service.ask({ method: 'POST', path: `/artifacts/${ARTIFACT}` });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
  });

  it('serves the bundled script as JavaScript that parses', async () => {
    const res = await service.ask({ path: '/assets/viewer.js' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.doesNotThrow(() => new Script(res.text), 'the bundle is valid script');
    assert.match(res.text, /ui\/notifications\/sandbox-resource-ready/, 'the bundle has the MCP Apps host side');
    const again = await service.ask({ path: '/assets/viewer.js' });
    assert.equal(again.text, res.text, 'built once, then served from memory');
  });

  it('is never served on the sandbox origin', async () => {
    const host = `sandbox.localhost:${service.port}`;
    for (const path of [`/artifacts/${ARTIFACT}`, '/assets/viewer.js']) {
      const res = await service.ask({ path, headers: { host } });
      assert.equal(res.status, 404, path);
      assert.equal(res.headers['content-type'], 'application/problem+json', path);
    }
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await service.ask({ path: '/api/openapi.json' })).json();
    assert.ok(doc.paths['/artifacts/{artifact_id}']?.get);
    assert.ok(doc.paths['/assets/viewer.js']?.get);
  });

  it("describes the viewer page's artifact_id as a UUID, as every id in a path (issue 24: it was a bare string)", async () => {
    const doc = (await service.ask({ path: '/api/openapi.json' })).json();
    const viewer = doc.paths['/artifacts/{artifact_id}'].get.parameters.find((p: { name: string }) => p.name === 'artifact_id');
    assert.deepEqual(viewer.schema, { type: 'string', format: 'uuid' });
    const ids: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, { parameters?: { name: string; in: string; schema: { format?: string } }[] }>>(doc.paths)) {
      for (const operation of Object.values(operations)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in === 'path' && /(^|_)(id|cid|rid|thread)$/.test(parameter.name) && parameter.schema.format !== 'uuid') ids.push(`${path} ${parameter.name}`);
        }
      }
    }
    assert.deepEqual(ids, [], 'every id in a path is described as a UUID');
  });
});

describe('the artifact viewer page with other settings', () => {
  it('frames nothing when no sandbox origin is configured', async (t) => {
    const service = await startService({ ARTIFACT_SANDBOX_ORIGIN: '' });
    t.after(() => service.close());
    const res = await service.ask({ path: `/artifacts/${ARTIFACT}` });
    assert.equal(res.headers['content-security-policy'], csp("'none'"));
  });

  it('frames nothing when the sandbox origin is the console origin', async (t) => {
    const same = 'http://localhost:1';
    const service = await startService({ ARTIFACT_SANDBOX_ORIGIN: same, ARTIFACT_VIEWER_ORIGIN: same });
    t.after(() => service.close());
    const res = await service.ask({ path: `/artifacts/${ARTIFACT}` });
    assert.equal(res.headers['content-security-policy'], csp("'none'"));
  });

  it('follows ARTIFACT_VIEWER_PATH', async (t) => {
    const service = await startService({ ARTIFACT_VIEWER_PATH: '/view/apps' });
    t.after(() => service.close());
    assert.equal((await service.ask({ path: `/view/apps/${ARTIFACT}` })).status, 200);
    assert.equal((await service.ask({ path: `/artifacts/${ARTIFACT}` })).status, 404);
  });
});
