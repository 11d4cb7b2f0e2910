// `node:test` for a browser page: describe/it/before/after/beforeEach/afterEach with the options the suites
// use, run in order, one result per test. The suites run unchanged; esbuild points `node:test` here.
type Fn = (t: TestContext) => unknown;
interface Options { readonly skip?: string | boolean; readonly timeout?: number }
interface TestContext { after(fn: () => unknown): void; skip(message?: string): void }
interface Suite {
  readonly name: string;
  readonly skip: string | boolean;
  readonly items: (Suite | Test)[];
  readonly before: Fn[];
  readonly after: Fn[];
  readonly beforeEach: Fn[];
  readonly afterEach: Fn[];
}
/** The per-test hooks of a test's suites: outermost first for `beforeEach`, innermost first for `afterEach`. */
interface EachHooks { readonly before: readonly Fn[]; readonly after: readonly Fn[] }
interface Test { readonly name: string; readonly skip: string | boolean; readonly fn: Fn; readonly timeout: number }
export interface Result { readonly name: string; readonly status: 'pass' | 'fail' | 'skip'; readonly error?: string }

const root: Suite = { name: '', skip: false, items: [], before: [], after: [], beforeEach: [], afterEach: [] };
let current = root;

const parse = (a: unknown, b: unknown): [Options, Fn] => (typeof a === 'function' ? [{}, a as Fn] : [(a ?? {}) as Options, b as Fn]);

export function describe(name: string, a?: unknown, b?: unknown): void {
  const [options, fn] = parse(a, b);
  const suite: Suite = { name, skip: options.skip ?? false, items: [], before: [], after: [], beforeEach: [], afterEach: [] };
  current.items.push(suite);
  const parent = current;
  current = suite;
  try {
    (fn as () => void)();
  } finally {
    current = parent;
  }
}

export function it(name: string, a?: unknown, b?: unknown): void {
  const [options, fn] = parse(a, b);
  current.items.push({ name, skip: options.skip ?? false, fn, timeout: options.timeout ?? 30_000 });
}
export const test = it;
export const before = (fn: Fn): void => void current.before.push(fn);
export const after = (fn: Fn): void => void current.after.push(fn);
export const beforeEach = (fn: Fn): void => void current.beforeEach.push(fn);
export const afterEach = (fn: Fn): void => void current.afterEach.push(fn);

class Skipped extends Error {}

async function runTest(test: Test, path: string, results: Result[], each: EachHooks): Promise<void> {
  const name = `${path}${test.name}`;
  if (test.skip !== false) return void results.push({ name, status: 'skip' });
  const cleanups: (() => unknown)[] = [];
  const t: TestContext = {
    after: (fn) => void cleanups.push(fn),
    skip: (message) => {
      throw new Skipped(message);
    },
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(async () => {
        for (const hook of each.before) await hook(t);
        try {
          await test.fn(t);
        } finally {
          for (const hook of each.after) await hook(t);
        }
      }),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${test.timeout} ms`)), test.timeout))),
    ]);
    results.push({ name, status: 'pass' });
  } catch (error) {
    results.push(error instanceof Skipped ? { name, status: 'skip' } : { name, status: 'fail', error: error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error) });
  } finally {
    clearTimeout(timer);
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

async function runSuite(suite: Suite, path: string, results: Result[], outer: EachHooks = { before: [], after: [] }): Promise<void> {
  const prefix = suite.name === '' ? path : `${path}${suite.name} > `;
  if (suite.skip !== false) {
    const skipAll = (s: Suite | Test, p: string): void => {
      if ('items' in s) for (const item of s.items) skipAll(item, `${p}${s.name} > `);
      else results.push({ name: `${p}${s.name}`, status: 'skip' });
    };
    return skipAll(suite, path);
  }
  const context: TestContext = { after: () => {}, skip: () => {} };
  const each: EachHooks = { before: [...outer.before, ...suite.beforeEach], after: [...suite.afterEach, ...outer.after] };
  for (const hook of suite.before) await hook(context);
  for (const item of suite.items) {
    if ('items' in item) await runSuite(item, prefix, results, each);
    else await runTest(item, prefix, results, each);
  }
  for (const hook of suite.after) await hook(context);
}

/** Runs every suite declared so far. */
export async function runAll(): Promise<Result[]> {
  const results: Result[] = [];
  await runSuite(root, '', results);
  return results;
}

export default { describe, it, test, before, after, beforeEach, afterEach };
