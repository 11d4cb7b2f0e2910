// `node:timers/promises` for a browser page: the promise form of setTimeout the suites use.
export const setTimeout = <T = void>(ms: number, value?: T): Promise<T> => new Promise((resolve) => globalThis.setTimeout(() => resolve(value as T), ms));
export default { setTimeout };
