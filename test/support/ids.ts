import { createHash } from 'node:crypto';

const BASE = Date.UTC(2026, 0, 1);

/**
 * A UUIDv7 whose time is `BASE + n` ms, so tests choose the order of ids. `salt` tells apart ids
 * made in different runs (property tests import many worlds into one database).
 */
export function testId(n: number, salt = 0): string {
  const time = (BASE + n).toString(16).padStart(12, '0');
  const random = createHash('sha256').update(`${n}:${salt}`).digest('hex');
  const variant = ((parseInt(random[4]!, 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(0, 3)}-${variant}${random.slice(5, 8)}-${random.slice(8, 20)}`;
}

/** SHA-256 hex, as tokens are stored. */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
