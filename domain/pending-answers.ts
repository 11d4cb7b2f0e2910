import type { Pending } from './model.ts';

/** One answer to a pending item as a client sends it: the option chosen, or the text given. */
export type PendingReply = { readonly id: string; readonly option: string } | { readonly id: string; readonly answer: string };

/** Why one answer of a list was refused; `index` is its position in the list. */
export interface PendingAnswerIssue {
  readonly index: number;
  readonly message: string;
}

/**
 * Checks a list of answers against the items pending on a thread (`pending`, by id): every id must
 * be pending there and answered once; an `option` must be one the item offers; free text answers
 * only a question. Answers every issue, so a client can fix them all at once; none means all apply.
 */
export function checkPendingAnswers(pending: ReadonlyMap<string, Pending>, answers: readonly PendingReply[]): PendingAnswerIssue[] {
  const issues: PendingAnswerIssue[] = [];
  const seen = new Set<string>();
  answers.forEach((reply, index) => {
    const item = pending.get(reply.id);
    if (item === undefined) issues.push({ index, message: `${reply.id} is not pending on this thread` });
    else if (seen.has(reply.id)) issues.push({ index, message: `${reply.id} is answered more than once` });
    else if ('option' in reply) {
      if (!item.options.some((option) => option.id === reply.option)) {
        issues.push({ index, message: `${reply.option} is not an option of ${reply.id}` });
      }
    } else if (item.kind !== 'question') issues.push({ index, message: `${reply.id} is an approval: answer it with an option` });
    seen.add(reply.id);
  });
  return issues;
}
