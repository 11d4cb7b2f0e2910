// Fastify 5 answering the recorded sandbox answers: a route per path, the request id Fastify makes
// (or the client's `X-Request-Id`) echoed back, its own pino logger (`logger: true`: one line as a
// request comes in, one as it completes), or `logger: { level: 'warn' }`.
import Fastify from 'fastify';
import { listening, peerSetup } from './protocol.ts';

const { answers, log } = peerSetup();
const app = Fastify({ logger: log === 'warn' ? { level: 'warn' } : true, requestIdHeader: 'x-request-id' });
for (const answer of answers) {
  const body = Buffer.from(answer.body, 'base64');
  app.get(answer.path, (request, reply) => {
    reply.code(answer.status).headers(answer.headers).header('x-request-id', request.id).send(body);
  });
}
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
listening(typeof address === 'object' && address !== null ? address.port : 0, () => app.close());
