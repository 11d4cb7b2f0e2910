import { createRequire } from 'node:module';
import type * as Core from '@mikro-orm/core';
import type * as Postgresql from '@mikro-orm/postgresql';

// MikroORM ships CommonJS. An ES `import` of a CommonJS package makes node lex the source of every
// file it re-exports to find the export names (cjs-module-lexer): for @mikro-orm/postgresql with
// knex and @mikro-orm/core that was about half of a start's module loading, measured with
// `node --cpu-prof` (docs/benchmarks.md, cold start). `require` loads the same modules (one copy:
// an `import` elsewhere gets these very objects) without lexing anything. Types come from the
// `import type`s above, unchanged. test/adapters/mikro-orm-require.test.ts keeps value imports of MikroORM out
// of the start path. The service's bundle (scripts/bundle.mjs) drops the `createRequire` below: its
// `require`s are then bundled, MikroORM with them.
const require = createRequire(import.meta.url);

export const core = require('@mikro-orm/core') as typeof Core;
export const postgresql = require('@mikro-orm/postgresql') as typeof Postgresql;
