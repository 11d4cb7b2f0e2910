import * as v from 'valibot';
import { isStorableText } from '../../domain/text.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';

const THREAD = 'must be given once: a thread id or a console key';
const AFTER = 'must be a whole number given once';

/** A thread reference a key may be: up to 200 characters, no control character, text PostgreSQL can store. */
const isThreadRef = (ref: string): boolean => ref !== '' && ref.length <= 200 && !/[\u0000-\u001f\u007f]/.test(ref) && isStorableText(ref);

/**
 * The live socket's query: `thread`, a thread row id or a console key, given once (missing, it is
 * told as a wrong one); `after`, a `seq` cursor, at most once. Ids and keys that are UUIDs are
 * compared in lower case, as every path id is.
 */
export const LiveQuery = v.object({
  thread: v.pipe(
    v.optional(v.string(THREAD), ''),
    v.check(isThreadRef, THREAD),
    v.transform((ref) => (UUID_PATTERN.test(ref) ? ref.toLowerCase() : ref)),
  ),
  after: v.optional(v.pipe(v.string(AFTER), v.regex(/^(0|[1-9][0-9]{0,9})$/, AFTER), v.transform(Number))),
});
