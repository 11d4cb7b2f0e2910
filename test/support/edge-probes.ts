import { connect } from 'node:net';

/**
 * Raw requests an attacker sends to the HTTP edge, each with the answer the service must give: framing
 * tricks (two lengths, a length and chunks, folded headers, codings), odd methods on every surface, hosts
 * written every way a host can be, request targets in every form. An error is problem+json with its code;
 * nothing hangs, nothing is a 500. Used by test/http/edge-probes.test.ts and the adversarial run.
 */
export interface EdgeProbe {
  readonly name: string;
  readonly bytes: string;
  readonly status: number;
  /** The problem's code, when the answer is an error. */
  readonly code?: string;
  /** The `Allow` header a 405 must carry. */
  readonly allow?: string;
  /** A header the answer must not carry. */
  readonly absent?: string;
}

const KEY = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

/** The probes for a fixture service on `port` (alice's token works; the sandbox origin is sandbox.localhost). */
export function edgeProbes(port: number, thread: string): EdgeProbe[] {
  const host = `Host: localhost:${port}\r\n`;
  const sandbox = `Host: sandbox.localhost:${port}\r\n`;
  const alice = 'Authorization: Bearer token-alice\r\n';
  const json = '{"token":"token-alice"}';
  const post = (headers: string, body: string) => `POST /api/session HTTP/1.1\r\n${host}Content-Type: application/json\r\n${headers}Connection: close\r\n\r\n${body}`;
  const get = (target: string, headers: string) => `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`;
  const hostOnly = (value: string) => get('/healthz', `Host: ${value}\r\n`);
  const live = `/api/console/live?thread=${thread}&after=0`;
  const handshake = (target: string, headers: string) => `GET ${target} HTTP/1.1\r\n${headers}Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
  const probes: EdgeProbe[] = [
    // Framing: every ambiguity about where a body ends is refused before anything reads it.
    { name: 'two Content-Length lines', bytes: post('Content-Length: 23\r\nContent-Length: 24\r\n', json), status: 400, code: 'malformed_request' },
    { name: 'two equal Content-Length lines', bytes: post('Content-Length: 23\r\nContent-Length: 23\r\n', json), status: 400, code: 'malformed_request' },
    { name: 'a Content-Length list', bytes: post('Content-Length: 23, 23\r\n', json), status: 400, code: 'malformed_request' },
    { name: 'a signed Content-Length', bytes: post('Content-Length: +23\r\n', json), status: 400, code: 'malformed_request' },
    { name: 'a Content-Length past 2^64', bytes: post('Content-Length: 99999999999999999999\r\n', json), status: 400, code: 'malformed_request' },
    { name: 'Content-Length and Transfer-Encoding', bytes: post('Content-Length: 23\r\nTransfer-Encoding: chunked\r\n', `0\r\n\r\n`), status: 400, code: 'malformed_request' },
    { name: 'two Transfer-Encoding lines', bytes: post('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n', `0\r\n\r\n`), status: 400, code: 'malformed_request' },
    { name: 'a space before the colon', bytes: post('Transfer-Encoding : chunked\r\n', `0\r\n\r\n`), status: 400, code: 'malformed_request' },
    { name: 'a folded header line', bytes: get('/healthz', `${host}X-Folded: a\r\n b\r\n`), status: 400, code: 'malformed_request' },
    { name: 'a coding before chunked (gzip, chunked)', bytes: post('Transfer-Encoding: gzip, chunked\r\n', `17\r\n${json}\r\n0\r\n\r\n`), status: 501, code: 'unsupported_transfer_coding' },
    { name: 'a coding without chunked (gzip)', bytes: post('Transfer-Encoding: gzip\r\n', json), status: 501, code: 'unsupported_transfer_coding' },
    { name: 'an Expect other than 100-continue', bytes: post('Expect: 200-ok\r\nContent-Length: 23\r\n', json), status: 417, code: 'expectation_failed' },
    { name: 'bare LF line ends', bytes: `GET /healthz HTTP/1.1\n${host.replace('\r\n', '\n')}\n`, status: 400, code: 'malformed_request' },
    { name: 'the HTTP/2 preface', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', status: 400, code: 'malformed_request' },
    { name: 'a lowercase method', bytes: get('/healthz', host).replace('GET', 'get'), status: 400, code: 'malformed_request' },
    { name: 'a space in the target', bytes: get('/heal thz', host), status: 400, code: 'malformed_request' },
    // Methods the service does not serve, on every surface: 405 with Allow, or 405 and closed for CONNECT.
    { name: 'CONNECT', bytes: `CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n`, status: 405, code: 'method_not_allowed', allow: '' },
    // Host: one, a host, ours.
    { name: 'two Host lines', bytes: get('/healthz', `${host}Host: evil.example\r\n`), status: 400, code: 'duplicate_host' },
    { name: 'two Host lines on a handshake', bytes: handshake(live, `${host}Host: evil.example\r\n${alice}${KEY}Sec-WebSocket-Version: 13\r\n`), status: 400, code: 'duplicate_host' },
    { name: 'a percent-encoded Host', bytes: hostOnly(`local%68ost:${port}`), status: 400, code: 'invalid_host' },
    { name: 'a Host with a trailing dot', bytes: hostOnly(`localhost.:${port}`), status: 400, code: 'invalid_host' },
    { name: 'a Host with userinfo', bytes: hostOnly(`alice@localhost:${port}`), status: 400, code: 'invalid_host' },
    { name: 'a Host list', bytes: hostOnly(`localhost:${port}, evil.example`), status: 400, code: 'invalid_host' },
    { name: 'a Host with a port of 0 first', bytes: hostOnly(`localhost:0${port}`), status: 400, code: 'invalid_host' },
    { name: 'a Host past port 65535', bytes: hostOnly('localhost:99999'), status: 400, code: 'invalid_host' },
    { name: 'a Host with a Cyrillic o', bytes: hostOnly(`l\u043ecalhost:${port}`), status: 400, code: 'invalid_host' },
    { name: 'an IPv6 Host with a zone', bytes: hostOnly(`[fe80::1%25eth0]:${port}`), status: 400, code: 'invalid_host' },
    { name: 'the loopback IPv6 Host', bytes: hostOnly(`[::1]:${port}`), status: 200 },
    { name: 'the loopback IPv6 Host written out', bytes: hostOnly(`[0:0:0:0:0:0:0:1]:${port}`), status: 421, code: 'host_not_allowed' },
    { name: 'an IPv4-mapped IPv6 Host', bytes: hostOnly(`[::ffff:127.0.0.1]:${port}`), status: 421, code: 'host_not_allowed' },
    { name: 'a decimal IPv4 Host', bytes: hostOnly(`2130706433:${port}`), status: 421, code: 'host_not_allowed' },
    { name: 'an octal IPv4 Host', bytes: hostOnly(`0177.0.0.1:${port}`), status: 421, code: 'host_not_allowed' },
    { name: 'a Host on another port', bytes: hostOnly(`localhost:${port + 1}`), status: 421, code: 'host_not_allowed' },
    // Request targets: an absolute one must name the Host's host.
    { name: 'an absolute target naming another host', bytes: get('http://evil.example/healthz', host), status: 421, code: 'host_not_allowed' },
    { name: 'an absolute target naming our IPv6 host', bytes: get(`http://[::1]:${port}/healthz`, `Host: [::1]:${port}\r\n`), status: 200 },
    { name: 'an absolute target with userinfo', bytes: get(`http://a@localhost:${port}/healthz`, host), status: 400, code: 'invalid_host' },
    { name: 'an absolute target of another scheme', bytes: get(`ftp://localhost:${port}/healthz`, host), status: 400, code: 'invalid_host' },
    { name: 'an absolute handshake naming another host', bytes: handshake(`http://evil.example${live}`, `${host}${alice}${KEY}Sec-WebSocket-Version: 13\r\n`), status: 421, code: 'host_not_allowed' },
    { name: 'an authority-form target on GET', bytes: get(`localhost:${port}`, host), status: 400, code: 'malformed_request' },
    { name: 'a dot-dot path', bytes: get('/api/console/../../healthz', host), status: 404, code: 'not_found' },
    { name: 'a percent-encoded sandbox path on the console origin', bytes: get('/artifacts/%73andbox', host), status: 404, code: 'not_found' },
    // The live socket's handshake: what RFC 6455 refuses is problem+json too.
    { name: 'a handshake with a bad key', bytes: handshake(live, `${host}${alice}Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n`), status: 400, code: 'invalid_websocket_handshake' },
    { name: 'a handshake with two keys', bytes: handshake(live, `${host}${alice}${KEY}${KEY}Sec-WebSocket-Version: 13\r\n`), status: 400, code: 'invalid_websocket_handshake' },
    { name: 'a handshake of another version', bytes: handshake(live, `${host}${alice}${KEY}Sec-WebSocket-Version: 99\r\n`), status: 400, code: 'invalid_websocket_handshake' },
    { name: 'a handshake with a broken protocol list', bytes: handshake(live, `${host}${alice}${KEY}Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: a,,b\r\n`), status: 400, code: 'invalid_websocket_handshake' },
  ];
  // TRACE, PROPFIND and a CORS preflight on each surface: the API, the console page, artifacts, the live path, the sandbox origin.
  // The artifact routes refuse another origin whatever the method (the browser-request check), before the 405.
  for (const [where, target, headers, allow, crossSite] of [
    ['the API', '/api/console/threads', host + alice, 'GET, HEAD', 405],
    ['the console page', '/', host, 'GET, HEAD', 405],
    ['an artifact', '/api/artifacts/x', host + alice, 'GET, HEAD', 403],
    ['the live path', '/api/console/live', host, 'GET, HEAD', 405],
    ['the system routes', '/healthz', host, 'GET, HEAD', 405],
    ['the sandbox origin', '/artifacts/sandbox', sandbox, 'GET, HEAD', 405],
  ] as const) {
    for (const method of ['TRACE', 'PROPFIND']) {
      probes.push({ name: `${method} on ${where}`, bytes: `${method} ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`, status: 405, code: 'method_not_allowed', allow });
    }
    // A CORS preflight from another site: refused like any OPTIONS, and nothing allows the site.
    const preflight = 'Origin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization\r\n';
    probes.push({ name: `a CORS preflight on ${where}`, bytes: `OPTIONS ${target} HTTP/1.1\r\n${headers}${preflight}Connection: close\r\n\r\n`, ...(crossSite === 405 ? { status: 405, code: 'method_not_allowed', allow } : { status: 403, code: 'cross_origin_refused' }), absent: 'access-control-allow-origin' });
  }
  return probes;
}

/** Sends a probe's bytes on a fresh connection; the whole answer once the server closed it (the probes all close). */
export function sendProbe(port: number, bytes: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer, or the connection was left open, within ${timeoutMs} ms`));
    }, timeoutMs);
  });
}

/** Whether an answer is the one a probe expects: the problem of its answer when it fails, null when it holds. */
export function probeMismatch(probe: EdgeProbe, answer: string): string | null {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0);
  if (status !== probe.status) return `status ${status}, not ${probe.status}: ${head.split('\r\n')[0] ?? ''} ${body.slice(0, 200)}`;
  if (probe.code !== undefined) {
    if (!/\r\ncontent-type: application\/problem\+json\r\n/i.test(`${head}\r\n`)) return `not problem+json: ${head}`;
    let code: unknown;
    try {
      code = (JSON.parse(body) as { code?: unknown }).code;
    } catch {
      return `a body that is not JSON: ${body.slice(0, 200)}`;
    }
    if (code !== probe.code) return `code ${String(code)}, not ${probe.code}`;
  }
  if (probe.allow !== undefined) {
    const allow = /\r\nallow: ?([^\r]*)/i.exec(`${head}\r\n`)?.[1];
    if (allow !== probe.allow) return `Allow ${JSON.stringify(allow)}, not ${JSON.stringify(probe.allow)}`;
  }
  if (probe.absent !== undefined && new RegExp(`\\r\\n${probe.absent}:`, 'i').test(head)) return `carries ${probe.absent}`;
  return null;
}
