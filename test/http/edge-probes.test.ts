// The HTTP edge as an attacker probes it (test/support/edge-probes.ts): framing tricks, odd methods on every
// surface, hosts and request targets written every way, the live socket's handshake. Each answer is the one
// the table names, problem+json when it is an error, and comes at once on a closed connection.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { F } from '../support/fixture-world.ts';
import { edgeProbes, probeMismatch, sendProbe } from '../support/edge-probes.ts';
import { startFixtureService, type TestService } from '../support/service.ts';

describe('the HTTP edge, probed as an attacker would', () => {
  let service: TestService;
  before(async () => {
    service = await startFixtureService();
  });
  after(() => service.close());

  it('answers every probe as the table says, problem+json for each refusal', async () => {
    const failures: string[] = [];
    for (const probe of edgeProbes(service.port, F.root)) {
      const answer = await sendProbe(service.port, probe.bytes).catch((error: Error) => `(${error.message})`);
      const mismatch = probeMismatch(probe, answer);
      if (mismatch !== null) failures.push(`${probe.name}: ${mismatch}`);
    }
    assert.deepEqual(failures, []);
  });

  it('tells a websocket client of another version the one it speaks', async () => {
    const refused = await sendProbe(service.port, `GET /api/console/live?thread=${F.root} HTTP/1.1\r\nHost: localhost:${service.port}\r\n` +
      'Authorization: Bearer token-alice\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\n\r\n');
    assert.match(refused, /\r\nsec-websocket-version: 13\r\n/i);
  });
});
