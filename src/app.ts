import type { Logger } from 'pino';
import { parseOrigin } from '../domain/origin.ts';
import type { Storage } from '../ports/storage.ts';
import { accountSurface } from './account/routes.ts';
import { artifactSurface } from './artifacts/routes.ts';
import { consoleReadRoutes } from './console/read-routes.ts';
import { consoleReads } from './console/reads.ts';
import { consoleSurface } from './console/routes.ts';
import { authenticator } from './identity/authenticate.ts';
import { sessionRoutes } from './identity/routes.ts';
import type { Config } from './config.ts';
import { requestListener, upgradeListener } from './http/edge.ts';
import { openApiDocument } from './http/openapi.ts';
import { buildSurface, type Surface } from './http/surface.ts';
import { sandboxSurface } from './sandbox/routes.ts';
import { systemSurface } from './system/routes.ts';

/** What the composition root is given: the frozen config, the logger, and what it cannot build itself. */
export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  /** The opened storage; the app owns it from here and closes it. */
  readonly storage: Storage;
}

/** A built service: the listeners for one `node:http` server, and how to drain it. */
export interface App {
  readonly onRequest: ReturnType<typeof requestListener>;
  readonly onUpgrade: ReturnType<typeof upgradeListener>;
  /** From now on, answers close their connection. */
  readonly drain: () => void;
  /** Releases what the app holds (storage, agent processes, sockets). */
  readonly close: () => Promise<void>;
}

/** The composition root: every adapter, use case and surface is built here and nowhere else. */
export function createApp(options: AppOptions): App {
  const { config, log } = options;
  const { storage } = options;
  const authenticate = authenticator(storage.userByTokenHash);
  const reads = consoleReads(storage);

  const sandbox = buildSurface(sandboxSurface());
  let description: Record<string, unknown> | undefined;
  const surfaces: Surface[] = [
    buildSurface(accountSurface(sessionRoutes(storage.userByTokenHash), authenticate)),
    buildSurface(consoleSurface(consoleReadRoutes(reads), authenticate)),
    buildSurface(artifactSurface(config)),
    // Last: it owns every path the others do not, so its router answers the 404s and 405s.
    buildSurface(systemSurface(storage.ready, () => (description ??= openApiDocument([...surfaces, sandbox])))),
  ];

  let draining = false;
  const edge = {
    log,
    sandboxOrigin: config.sandboxOrigin === null ? null : parseOrigin(config.sandboxOrigin),
    trustProxy: config.trustProxy,
    sandbox,
    surfaces,
    draining: () => draining,
  };
  return {
    onRequest: requestListener(edge),
    onUpgrade: upgradeListener(edge),
    drain: () => {
      draining = true;
    },
    close: () => storage.close(),
  };
}
