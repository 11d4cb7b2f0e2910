import type { LedgerSegment } from '../domain/ledger-visibility.ts';
import type { Message, Page, PageRequest } from '../domain/model.ts';

/** The chat ledger: the one store that reads thread messages. */
export interface LedgerStore {
  /** A page of the ledger the segments describe (a fork's own messages and its ancestors' up to the cutoffs), newest first. */
  page(segments: readonly LedgerSegment[], page: PageRequest): Promise<Page<Message>>;
}
