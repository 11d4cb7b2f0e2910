import * as v from 'valibot';
import { isStorableText } from '../../domain/text.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import { SEARCH_TEXT_MAX, SEARCH_WORDS_MAX, searchWords } from '../../domain/thread-search.ts';

/**
 * Refuses text PostgreSQL cannot store (the NUL character, a lone UTF-16 surrogate): it would fail
 * the write halfway, not the request.
 */
export const storable = v.check((text: string) => isStorableText(text), 'must not contain the NUL character or a lone UTF-16 surrogate');

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

/** GET /threads: a page, archived threads only with `?archived=true`, and `?q=<words>` (domain/thread-search.ts). */
export const ThreadListQuery = v.object({
  ...PageQuery.entries,
  archived: v.optional(v.pipe(v.picklist(['true', 'false'], 'must be true or false'), v.transform((flag) => flag === 'true')), 'false'),
  q: v.optional(
    v.pipe(
      v.string('must be given once'),
      storable,
      v.maxLength(SEARCH_TEXT_MAX, `must be at most ${SEARCH_TEXT_MAX} characters`),
      v.check((q) => searchWords(q).length <= SEARCH_WORDS_MAX, `must hold at most ${SEARCH_WORDS_MAX} words`),
    ),
  ),
});
