// The service itself (bench/bench-service.ts: the real composition root on memory storage), logging
// at PEER_LOG's level (`default`: the config's default, `info`) to stdout through the bounded stream
// `npm start` uses (src/log-stream.ts).
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { boundedLogStream } from '../../src/log-stream.ts';
import { startBenchService } from '../bench-service.ts';
import { listening, peerSetup } from './protocol.ts';

const { log } = peerSetup();
if (log === 'warn') process.env.BENCH_LOG_LEVEL = 'warn';
else delete process.env.BENCH_LOG_LEVEL;
const service = await startBenchService(createMemoryStorage(), undefined, { destination: boundedLogStream(process.stdout) });
listening(service.port, service.close);
