/**
 * The domain core: pure rules with no I/O and no imports from outside this folder, so it runs
 * unchanged in Node, browsers, Deno and workers. Published as the package's `./domain` export.
 */
export * from './result.ts';
export * from './origin.ts';
export * from './csp-source.ts';
export * from './csp.ts';
export * from './sandbox-policy.ts';
export * from './sandbox-dispatch.ts';
export * from './allowed-hosts.ts';
export * from './errors.ts';
export * from './model.ts';
export * from './thread-access.ts';
export * from './ledger-visibility.ts';
export * from './vocabulary.ts';
export * from './world.ts';
export * from './events.ts';
export * from './moves.ts';
export * from './text.ts';
export * from './run-errors.ts';
export * from './bounds.ts';
export * from './history-brief.ts';
export * from './chat-text.ts';
export * from './worktree.ts';
