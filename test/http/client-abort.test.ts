import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { startService } from '../support/service.ts';

describe('a client that aborts mid-body', () => {
  it('is logged at debug, never as an error with a stack, and the service goes on', { timeout: 15_000 }, async () => {
    const service = await startService();
    try {
      const socket = connect(service.port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write(`POST /api/session HTTP/1.1\r\nHost: localhost:${service.port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"tok`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      const deadline = Date.now() + 5_000;
      while (!service.logs.some((l) => l.msg === 'client aborted the request')) {
        assert.ok(Date.now() < deadline, `no debug line; logs: ${JSON.stringify(service.logs)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const line = service.logs.find((l) => l.msg === 'client aborted the request')!;
      assert.equal(line.level, 20);
      assert.equal(line.path, '/api/session');
      assert.deepEqual(service.logs.filter((l) => (l.level as number) >= 50), []);
      assert.ok(!JSON.stringify(service.logs).includes('"stack"'));
      assert.equal((await service.ask({ path: '/healthz' })).status, 200);
    } finally {
      await service.close();
    }
  });
});
