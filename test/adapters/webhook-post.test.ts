import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeWebhookPost, WEBHOOK_BODY_MAX, type Resolve } from '../../adapters/node-http/webhook-post.ts';

/** Names the tests resolve themselves: a rebinding DNS could answer anything, so the answer is the test's. */
const names: Record<string, string[]> = {
  'hooks.test': ['127.0.0.1'],
  'evil.test': ['127.0.0.1'],
  'internal.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'v6-local.test': ['fd00:ec2::254'],
};
const resolve: Resolve = async (host) => {
  const addresses = names[host];
  if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

let made: { key: string; cert: string } | null | undefined;
/** A self-signed certificate for hooks.test, made once with the openssl command; null where there is none. */
function openssl(): { key: string; cert: string } | null {
  if (made !== undefined) return made;
  const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
  try {
    const run = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=hooks.test',
      '-addext', 'subjectAltName=DNS:hooks.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    made = run.status === 0 ? { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') } : null;
  } catch {
    made = null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return made;
}

describe('webhook tries over node:http (adapters/node-http)', () => {
  let server: Server;
  let port: number;
  let seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  let handle: (req: IncomingMessage, res: ServerResponse) => void;
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
        handle(req, res);
      });
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }));
  beforeEach(() => {
    seen = [];
    handle = (_req, res) => res.writeHead(204).end();
  });
  const request = (url: string) => ({ url, headers: { 'content-type': 'application/json', 'webhook-id': 'msg-1' }, body: '{"type":"run_finished"}' });

  it('posts the body with its headers to a listed name that resolves to loopback, and answers the status', async () => {
    const post = nodeWebhookPost({ allowedHosts: ['hooks.test'], resolve });
    assert.deepEqual(await post(request(`http://hooks.test:${port}/in?x=1`)), { kind: 'answered', status: 204 });
    assert.equal(seen.length, 1);
    assert.deepEqual([seen[0]!.method, seen[0]!.url, seen[0]!.body, seen[0]!.headers['webhook-id'], seen[0]!.headers.host], ['POST', '/in?x=1', '{"type":"run_finished"}', 'msg-1', `hooks.test:${port}`]);
  });

  it('connects to nothing when the name resolves into a loopback, private, link-local or metadata range and is not listed', async () => {
    const post = nodeWebhookPost({ allowedHosts: ['hooks.test'], resolve });
    for (const host of ['evil.test', 'internal.test', 'metadata.test', 'v6-local.test']) {
      const outcome = await post(request(`https://${host}:${port}/in`));
      assert.equal(outcome.kind, 'blocked', host);
    }
    const internal = await post(request(`https://internal.test/in`));
    assert.deepEqual(internal, { kind: 'blocked', reason: '10.0.0.5 is a private address' });
    assert.equal(seen.length, 0, 'nothing reached the loopback server');
  });

  it('an address written in the URL is checked too: refused unless listed', async () => {
    assert.equal((await nodeWebhookPost({ allowedHosts: [], resolve })(request(`http://127.0.0.1:${port}/in`))).kind, 'blocked');
    assert.equal((await nodeWebhookPost({ allowedHosts: [], resolve })(request(`http://[::ffff:127.0.0.1]:${port}/in`))).kind, 'blocked');
    assert.deepEqual(await nodeWebhookPost({ allowedHosts: ['127.0.0.1'], resolve })(request(`http://127.0.0.1:${port}/in`)), { kind: 'answered', status: 204 });
    assert.equal(seen.length, 1);
  });

  it('does not follow a redirect: a 3xx is the answer, and only one request is made', async () => {
    handle = (_req, res) => res.writeHead(307, { location: `http://hooks.test:${port}/elsewhere` }).end();
    const outcome = await nodeWebhookPost({ allowedHosts: ['hooks.test'], resolve })(request(`http://hooks.test:${port}/in`));
    assert.deepEqual(outcome, { kind: 'answered', status: 307 });
    assert.deepEqual(seen.map((s) => s.url), ['/in']);
  });

  it('reads at most 64 KiB of an answer: an endless body ends the try at once, not at the time-out', async () => {
    let written = 0;
    let closed: () => void;
    const gone = new Promise<void>((resolve) => { closed = resolve; });
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => closed());
      pump();
    };
    const started = Date.now();
    const outcome = await nodeWebhookPost({ allowedHosts: ['hooks.test'], resolve, timeoutMs: 5_000 })(request(`http://hooks.test:${port}/in`));
    assert.deepEqual(outcome, { kind: 'answered', status: 200 });
    assert.ok(Date.now() - started < 4_000, 'not the time-out');
    await gone;
    assert.ok(written >= WEBHOOK_BODY_MAX, 'the receiver sent more than the cap before the try let go');
  });

  it('gives up a try with no answer after the time-out', async () => {
    handle = () => {};
    const outcome = await nodeWebhookPost({ allowedHosts: ['hooks.test'], resolve, timeoutMs: 300 })(request(`http://hooks.test:${port}/in`));
    assert.deepEqual(outcome, { kind: 'timed_out' });
  });

  it('a refused connection and an unknown name are unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((ready) => closed.listen(0, '127.0.0.1', ready));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const post = nodeWebhookPost({ allowedHosts: ['hooks.test', 'nowhere.test'], resolve });
    assert.deepEqual(await post(request(`http://hooks.test:${closedPort}/in`)), { kind: 'unreachable', reason: 'ECONNREFUSED' });
    assert.deepEqual(await post(request('http://nowhere.test/in')), { kind: 'unreachable', reason: 'ENOTFOUND' });
  });

  it('over https: connects to the checked address and verifies the certificate against the name (SNI), not the address', { skip: openssl() === null ? 'openssl is not installed' : false }, async () => {
    const { key, cert } = openssl()!;
    const tls = createTlsServer({ key, cert }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202).end());
    });
    await new Promise<void>((ready) => tls.listen(0, '127.0.0.1', ready));
    const tlsPort = (tls.address() as AddressInfo).port;
    try {
      const post = nodeWebhookPost({ allowedHosts: ['hooks.test', 'evil.test'], resolve, ca: cert });
      assert.deepEqual(await post(request(`https://hooks.test:${tlsPort}/in`)), { kind: 'answered', status: 202 });
      // The same address under another name: its certificate does not name it, and nothing is sent.
      const other = await post(request(`https://evil.test:${tlsPort}/in`));
      assert.deepEqual(other, { kind: 'unreachable', reason: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      // Without the test's authority the self-made certificate is refused.
      assert.equal((await nodeWebhookPost({ allowedHosts: ['hooks.test'], resolve })(request(`https://hooks.test:${tlsPort}/in`))).kind, 'unreachable');
    } finally {
      tls.closeAllConnections();
      await new Promise<void>((done) => tls.close(() => done()));
    }
  });
});
