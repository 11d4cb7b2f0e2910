import type { LedgerSegment } from '../domain/ledger-visibility.ts';
import type { Message, Page, PageRequest } from '../domain/model.ts';

/** What the ledger read knows of a referenced artifact, to offer its overview without contacting the provider. */
export interface ReferencedApp {
  readonly title: string;
  readonly provider_name: string;
}

/**
 * A ledger message, with the title and provider of the artifact it references; without `app` when
 * it references none (or one that is gone): then the entry is the message as answered, field for field.
 */
export interface LedgerEntry extends Message {
  readonly app?: ReferencedApp;
}

/** The chat ledger: the one store that reads thread messages. */
export interface LedgerStore {
  /**
   * A page of the ledger the segments describe (a fork's own messages and its ancestors' up to the cutoffs), newest
   * first; `live`: without the messages a rewind took back (what a history brief is made of).
   */
  page(segments: readonly LedgerSegment[], page: PageRequest, options?: { readonly live?: boolean }): Promise<Page<LedgerEntry>>;
}
