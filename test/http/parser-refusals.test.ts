import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { App } from '../../src/app.ts';
import { parserRefusal } from '../../src/http/parser-refusal.ts';
import { attach, createListener, listen, MAX_HEADER_BYTES, shutdown } from '../../src/server.ts';

/** An app that answers 200: every refusal below comes before it. */
const app: App = {
  onRequest: (req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  },
  onUpgrade: (_req, socket) => socket.destroy(),
  drain: () => {},
  close: async () => {},
};

/** Sends `bytes` on a raw connection and resolves with everything answered until the server closed it. */
async function exchange(port: number, bytes: string | Buffer): Promise<{ head: string; body: string; ms: number }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  const began = Date.now();
  const closed = once(socket, 'close');
  socket.write(bytes);
  await closed;
  const [head, body] = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n');
  return { head: head ?? '', body: body ?? '', ms: Date.now() - began };
}

describe("the HTTP parser's refusals", () => {
  const logs: Record<string, unknown>[] = [];
  const server = createListener({ headersTimeoutMs: 500, requestTimeoutMs: 1_000 });
  let port = 0;

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
        done();
      },
    });
    attach(server, app, pino({ level: 'info' }, sink));
    port = await listen(server, 0, '127.0.0.1');
  });
  after(() => shutdown(server, app, 100));

  /** The answer is the catalog's problem+json for `code`, with a fresh X-Request-Id, and the connection is closed. */
  function isRefusal(answer: { head: string; body: string }, status: number, code: string) {
    assert.match(answer.head, new RegExp(`^HTTP/1\\.1 ${status} `), answer.head);
    assert.match(answer.head, /\r\ncontent-type: application\/problem\+json\r\n/i);
    assert.match(answer.head, /\r\nconnection: close\r\n/i);
    assert.match(answer.head, /\r\ncache-control: no-store\r\n/i);
    const id = /\r\nx-request-id: ([0-9a-f-]{36})(\r\n|$)/i.exec(answer.head)?.[1];
    assert.ok(id !== undefined, `an X-Request-Id in ${answer.head}`);
    const body = JSON.parse(answer.body);
    assert.equal(body.type, 'about:blank');
    assert.equal(body.status, status);
    assert.equal(body.code, code);
    assert.equal(typeof body.title, 'string');
    assert.equal(typeof body.detail, 'string');
    return { id, body };
  }

  it('answers an HTTP/1.1 request without Host 400 missing_host', async () => {
    const { id } = isRefusal(await exchange(port, 'GET /x HTTP/1.1\r\n\r\n'), 400, 'missing_host');
    assert.ok(logs.some((line) => line.reqId === id && line.code === 'missing_host' && line.status === 400), 'logged with its request id');
  });

  it('answers an HTTP/1.1 websocket handshake without Host 400 missing_host too', async () => {
    const handshake = 'GET /live HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';
    const { id } = isRefusal(await exchange(port, handshake), 400, 'missing_host');
    assert.ok(logs.some((line) => line.reqId === id && line.code === 'missing_host' && line.status === 400), 'logged with its request id');
  });

  it('answers a request with two Host lines 400 duplicate_host (node would keep the first), plain or websocket', async () => {
    for (const second of ['evil.example', 'x']) {
      const { id } = isRefusal(await exchange(port, `GET /x HTTP/1.1\r\nHost: x\r\nHost: ${second}\r\n\r\n`), 400, 'duplicate_host');
      assert.ok(logs.some((line) => line.reqId === id && line.code === 'duplicate_host' && line.status === 400), 'logged with its request id');
    }
    isRefusal(await exchange(port, 'GET /x HTTP/1.0\r\nhost: x\r\nHOST: evil.example\r\n\r\n'), 400, 'duplicate_host');
    const handshake = 'GET /live HTTP/1.1\r\nHost: x\r\nHost: evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';
    isRefusal(await exchange(port, handshake), 400, 'duplicate_host');
  });

  it('answers CONNECT 405 method_not_allowed with an empty Allow, and opens no tunnel', async () => {
    const answer = await exchange(port, 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\nbytes for the tunnel');
    const { id } = isRefusal(answer, 405, 'method_not_allowed');
    assert.match(answer.head, /\r\nallow: \r\n/i);
    assert.ok(logs.some((line) => line.reqId === id && line.code === 'method_not_allowed'), 'logged with its request id');
  });

  it('answers a NUL in a header 400 malformed_request, and logs one line without the bytes sent', async () => {
    const { id, body } = isRefusal(await exchange(port, 'GET /x HTTP/1.1\r\nHost: localhost\r\nX-Secret: nul-secret\0here\r\n\r\n'), 400, 'malformed_request');
    assert.match(body.detail, /character/);
    const lines = logs.filter((line) => line.reqId === id);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.status, 400);
    assert.ok(!JSON.stringify(logs).includes('nul-secret'), 'the raw bytes are never logged');
  });

  it('answers a lowercase method and a request line that is not one 400 malformed_request', async () => {
    const lower = isRefusal(await exchange(port, 'get /x HTTP/1.1\r\nHost: localhost\r\n\r\n'), 400, 'malformed_request');
    assert.match(lower.body.detail, /method/);
    isRefusal(await exchange(port, 'NOT A REQUEST LINE\r\n\r\n'), 400, 'malformed_request');
    isRefusal(await exchange(port, 'GET /x HTTP/9.9\r\nHost: localhost\r\n\r\n'), 400, 'malformed_request');
  });

  it('answers headers past the limit 431 headers_too_large', async () => {
    const big = `GET /x HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`;
    isRefusal(await exchange(port, big), 431, 'headers_too_large');
  });

  it('answers headers that do not arrive in time 408 request_timeout', { timeout: 10_000 }, async () => {
    const answer = await exchange(port, 'GET /x HTTP/1.1\r\nHost: localhost\r\n');
    isRefusal(answer, 408, 'request_timeout');
    assert.ok(answer.ms < 5_000, `answered after ${answer.ms} ms`);
  });

  it('maps each error of the parser to its code, and answers none to a client that left', () => {
    assert.deepEqual(parserRefusal('HPE_CHUNK_EXTENSIONS_OVERFLOW'), { code: 'chunk_extensions_too_large' });
    assert.equal(parserRefusal('HPE_SOMETHING_NEW')?.code, 'malformed_request');
    for (const gone of ['ECONNRESET', 'EPIPE', undefined]) assert.equal(parserRefusal(gone), null);
  });
});
