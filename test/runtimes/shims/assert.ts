// `node:assert/strict` for a browser page: the assertions the suites use, with Node's strict meaning
// (Object.is for equal; deep equality over own enumerable keys, prototypes, arrays, Maps, Sets, Dates).
export class AssertionError extends Error {
  override name = 'AssertionError';
}

const show = (value: unknown): string => {
  try {
    return JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(value);
  } catch {
    return String(value);
  }
};

function fail(message: unknown, fallback: string): never {
  if (message instanceof Error) throw message;
  throw new AssertionError(typeof message === 'string' ? `${message}: ${fallback}` : fallback);
}

export function isDeepStrictEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === (b as Date).getTime();
  if (a instanceof RegExp) return String(a) === String(b);
  if (a instanceof Map) {
    const other = b as Map<unknown, unknown>;
    if (a.size !== other.size) return false;
    for (const [key, value] of a) if (!other.has(key) || !isDeepStrictEqual(value, other.get(key))) return false;
    return true;
  }
  if (a instanceof Set) {
    const other = b as Set<unknown>;
    return a.size === other.size && [...a].every((value) => other.has(value));
  }
  if (Array.isArray(a) && a.length !== (b as unknown[]).length) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && isDeepStrictEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function assert(value: unknown, message?: unknown): asserts value {
  if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
}

assert.ok = assert;
assert.equal = (actual: unknown, expected: unknown, message?: unknown): void => {
  if (!Object.is(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
};
assert.strictEqual = assert.equal;
assert.notEqual = (actual: unknown, expected: unknown, message?: unknown): void => {
  if (Object.is(actual, expected)) fail(message, `expected anything but ${show(expected)}`);
};
assert.deepEqual = (actual: unknown, expected: unknown, message?: unknown): void => {
  if (!isDeepStrictEqual(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
};
assert.deepStrictEqual = assert.deepEqual;
assert.notDeepEqual = (actual: unknown, expected: unknown, message?: unknown): void => {
  if (isDeepStrictEqual(actual, expected)) fail(message, `expected anything but ${show(expected)}`);
};
assert.match = (text: string, pattern: RegExp, message?: unknown): void => {
  if (!pattern.test(text)) fail(message, `${show(text)} does not match ${String(pattern)}`);
};
assert.doesNotMatch = (text: string, pattern: RegExp, message?: unknown): void => {
  if (pattern.test(text)) fail(message, `${show(text)} matches ${String(pattern)}`);
};
assert.fail = (message?: unknown): never => fail(message, 'failed');

/** Whether an error is what `expected` asks for (a class, a pattern over its text, a predicate, an object of fields). */
function expectedError(error: unknown, expected: unknown): boolean {
  if (expected === undefined) return true;
  if (expected instanceof RegExp) return expected.test(String(error));
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && error instanceof (expected as new () => unknown)) return true;
    return (expected as (e: unknown) => boolean)(error) === true;
  }
  if (typeof expected === 'object' && expected !== null) {
    return Object.entries(expected).every(([key, value]) => {
      const got = (error as Record<string, unknown>)[key];
      return value instanceof RegExp ? value.test(String(got)) : isDeepStrictEqual(got, value);
    });
  }
  return false;
}

assert.throws = (fn: () => unknown, expected?: unknown, message?: unknown): void => {
  // As in Node, a string in the second place is the message, not what is expected.
  if (typeof expected === 'string') [expected, message] = [undefined, expected];
  try {
    fn();
  } catch (error) {
    if (!expectedError(error, expected)) fail(message, `threw the wrong error: ${String(error)}`);
    return;
  }
  fail(message, 'expected it to throw');
};
assert.rejects = async (promise: Promise<unknown> | (() => Promise<unknown>), expected?: unknown, message?: unknown): Promise<void> => {
  if (typeof expected === 'string') [expected, message] = [undefined, expected];
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    if (!expectedError(error, expected)) fail(message, `rejected with the wrong error: ${String(error)}`);
    return;
  }
  fail(message, 'expected it to reject');
};

export default assert;
export const { ok, equal, notEqual, deepEqual, match, doesNotMatch, throws, rejects } = assert;
