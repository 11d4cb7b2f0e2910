/**
 * An id derived from `seed` (a UUID of version 8, a hash): the same seed gives the same id on every
 * instance and after a restart, so what two instances derive from one message is one row (a reply's delivery).
 */
export type DerivedId = (seed: string) => string;
