import { createHash } from 'node:crypto';
import type { DerivedId } from '../../ports/derived-id.ts';

/** A UUID-shaped id (version 8, the variant bits set) from the SHA-256 of `seed`: the same seed gives the same id everywhere. */
export const derivedUuid: DerivedId = (seed) => {
  const hex = createHash('sha256').update(seed).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};
