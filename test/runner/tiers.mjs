// Which tier each test file runs in, chosen from the durations test/run.mjs prints (docs/testing.md).
//
// `npm test` (the fast tier) runs every test of product logic with no server and no network: the domain's
// properties, the use cases, every port's contract suite on memory and on embedded PGlite, and the HTTP
// routes on memory. `npm run test:full` adds what needs a server, a browser or a started service, or
// breaks one on purpose. A file of the storage matrix (test/support/storage-kinds.ts) runs in both: on
// memory in the fast tier, on every backend in the full one.

/** Files (or folders, ending in `/`) that only the full tier runs, each with why. */
const FULL = {
  // Fault tests: kill -9, PostgreSQL stopped and started, connections frozen and cut.
  'test/faults/': 'faults',
  // Chromium drives the console UI, the viewer and the sandbox.
  'test/browser/': 'a browser',
  // A real OpenID Connect provider (oidc-provider) on 127.0.0.1.
  'test/openid-client/': 'a real OpenID provider',
  'test/http/oidc-sign-in.test.ts': 'a real OpenID provider',
  'test/two-instances-sign-in.test.ts': 'two instances on PostgreSQL, a real OpenID provider',
  // A private Prosody server.
  'test/xmpp/xmpp-channel-service.test.ts': 'Prosody',
  'test/xmpp/xmpp-inbound.test.ts': 'Prosody',
  'test/xmpp/xmpp-rooms.test.ts': 'Prosody',
  'test/xmpp/xmpp-npm-start.test.ts': 'Prosody and npm start',
  'test/xmpp/xmpp-two-instances.test.ts': 'Prosody',
  'test/adapters/xmpp-channel.test.ts': 'Prosody',
  'test/demo-xmpp-channel.test.ts': 'Prosody and npm start',
  'test/demo-slack-channel.test.ts': 'npm start',
  // The service started as a process, the way `npm start` does.
  'test/agent-sandbox-start.test.ts': 'npm start',
  'test/build-bundle.test.ts': 'npm start',
  'test/demo-allowed-hosts.test.ts': 'npm start',
  'test/demo-world-rule.test.ts': 'npm start',
  'test/demo.test.ts': 'npm start',
  'test/shutdown.test.ts': 'npm start',
  'test/stalled-log-reader.test.ts': 'npm start',
  'test/start-process.test.ts': 'npm start',
  'test/startup-failures.test.ts': 'npm start',
  'test/storage-modes.test.ts': 'npm start',
  'test/promise-hooks-off.test.ts': 'a process of its own',
  'test/two-instances.test.ts': 'two instances on PostgreSQL or PGlite',
  'test/slack/slack-two-instances.test.ts': 'two instances on PostgreSQL, one local Slack',
  'test/deploy-proxy.test.ts': 'two instances behind a proxy',
  'test/storage-outage.test.ts': 'a database stopped under the service',
  'test/storage-outage-queued.test.ts': 'a database stopped under the service, many requests at once',
  'test/http/ready-before-agents.test.ts': 'npm start',
  // The embedded database's own life: its lock across processes, its start, its migrations and statements.
  'test/adapters/embedded-lock.test.ts': 'processes killed holding the lock',
  'test/adapters/embedded-start.test.ts': 'the embedded database started many times',
  'test/adapters/mikro-orm-migrate.test.ts': 'every migration, up and down',
  'test/adapters/mikro-orm-queries.test.ts': 'statements counted per read',
  'test/adapters/mikro-orm-statement-listener.test.ts': 'a database per case',
  'test/adapters/kept-catalog.test.ts': 'restarts of the embedded database',
  // The HTTP routes on embedded PGlite: the storage matrix.
  'test/http/console-queries.test.ts': 'statements per read on PGlite',
  'test/http/read-promises.test.ts': 'promises per read on PGlite',
  'test/http/storable-text.test.ts': 'text refused before PGlite stores it',
  // PostgreSQL only.
  'test/adapters/mikro-orm-postgres.test.ts': 'PostgreSQL',
  'test/adapters/postgres-bus-notify-first.test.ts': 'PostgreSQL',
};

/** Files of the storage matrix: memory in the fast tier, every backend in the full one. */
const BOTH = [
  'test/http/channel-links.test.ts',
  'test/http/checkpoints.test.ts',
  'test/http/chat-inbound.test.ts',
  'test/http/fuzz.test.ts',
  'test/http/log-redaction.test.ts',
  'test/http/merge-races.test.ts',
  'test/http/queue.test.ts',
  'test/http/read-resolution.test.ts',
  'test/http/rewinds.test.ts',
  'test/http/steer.test.ts',
  'test/http/teleport-moves.test.ts',
  'test/http/thread-management.test.ts',
  'test/http/turn-races.test.ts',
  'test/http/turn-round-trips.test.ts',
  'test/http/turns.test.ts',
  'test/http/worktrees.test.ts',
];

/** 'fast', 'full' or 'both'. */
export function tierOf(file) {
  if (BOTH.includes(file)) return 'both';
  for (const [path] of Object.entries(FULL)) if (path.endsWith('/') ? file.startsWith(path) : file === path) return 'full';
  return 'fast';
}

export const FULL_ONLY = FULL;
export const BOTH_TIERS = BOTH;
