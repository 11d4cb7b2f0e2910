/**
 * Run as a process of its own by test/promise-hooks-off.test.ts: starts the service over embedded
 * PGlite, imports a world as a start does, runs a directive, then prints whether a promise hook is on
 * (with none, a promise reaction runs with no async id: `executionAsyncId()` is 0 there).
 */
import { executionAsyncId } from 'node:async_hooks';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { fixtureWorld } from './fixture-world.ts';
import { startService } from './service.ts';

const reactionAsyncId = () => new Promise<number>((resolve) => Promise.resolve().then(() => resolve(executionAsyncId())));

const before = await reactionAsyncId();
const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
await storage.importWorld(fixtureWorld());
const service = await startService({}, { storage });
const headers = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const posted = await service.ask({ method: 'POST', path: `/api/console/threads/${crypto.randomUUID()}/directives`, headers, body: JSON.stringify({ text: 'Hello', model: 'claude:opus', project: 'acme-web' }) });
const read = await service.ask({ method: 'GET', path: '/api/console/threads?limit=10', headers });
const afterwards = await reactionAsyncId();
await service.close();
await storage.close();
await server.close();
process.stdout.write(`${JSON.stringify({ before, after: afterwards, posted: posted.status, read: read.status })}\n`);
