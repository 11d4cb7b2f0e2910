import * as v from 'valibot';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';

/** Refuses the NUL character, which PostgreSQL text cannot store (it would fail the write, not the request). */
export const noNul = v.check((text: string) => !text.includes('\u0000'), 'must not contain the NUL character');

/** A path or cursor id: any UUID, compared in lower case (ids are stored so). */
export const UuidParam = v.pipe(
  v.string(),
  v.regex(UUID_PATTERN, 'must be a UUID'),
  v.transform((id) => id.toLowerCase()),
);

/** `?limit=` (1 to 200, default 50) and `?before=<cursor>` of every keyset page. */
export const PageQuery = v.object({
  limit: v.optional(
    v.pipe(
      v.string('must be given once'),
      v.regex(/^[0-9]{1,3}$/, 'must be a whole number from 1 to 200'),
      v.transform(Number),
      v.minValue(1, 'must be a whole number from 1 to 200'),
      v.maxValue(200, 'must be a whole number from 1 to 200'),
    ),
    '50',
  ),
  before: v.optional(v.pipe(v.string('must be given once'), v.regex(UUID_PATTERN, 'must be a UUID'), v.transform((id) => id.toLowerCase()))),
});

export const ThreadParams = v.object({ id: UuidParam });
export const ConversationParams = v.object({ id: UuidParam, cid: UuidParam });
export const RunParams = v.object({ id: UuidParam, rid: UuidParam });
