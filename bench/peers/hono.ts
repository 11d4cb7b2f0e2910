// Hono 4 on @hono/node-server answering the recorded sandbox answers: a route per path, its
// `requestId()` middleware (a random UUID, or the client's `X-Request-Id`, sent back), and by default
// its `logger()` middleware (one line as a request comes in, one as it completes); at `warn` no logger,
// Hono having no levels.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { logger } from 'hono/logger';
import { requestId } from 'hono/request-id';
import { listening, peerSetup } from './protocol.ts';

const { answers, log } = peerSetup();
const app = new Hono();
app.use(requestId());
if (log === 'default') app.use(logger());
for (const answer of answers) {
  const body = Buffer.from(answer.body, 'base64');
  app.get(answer.path, (c) => c.body(body, answer.status as 200, answer.headers));
}
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  listening(info.port, () => new Promise((resolve) => server.close(resolve)));
});
