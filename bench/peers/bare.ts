// A bare `node:http` server answering the recorded sandbox answers: no router beyond a lookup of the
// path, no request id, no log: the floor of what the machine can do.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listening, peerSetup } from './protocol.ts';

const { answers } = peerSetup();
const byPath = new Map(answers.map((answer) => [answer.path, { ...answer, bytes: Buffer.from(answer.body, 'base64') }]));
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  const answer = byPath.get(mark === -1 ? url : url.slice(0, mark));
  if (answer === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(answer.bytes);
});
server.listen(0, '127.0.0.1', () => {
  listening((server.address() as AddressInfo).port, () => new Promise((resolve) => server.close(resolve)));
});
