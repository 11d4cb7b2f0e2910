import type { LedgerSegment } from '../domain/ledger-visibility.ts';
import type { Artifact, Id, Installation } from '../domain/model.ts';

/** An owned artifact with the installation it names (null when that installation does not exist). */
export interface OwnedArtifact {
  readonly artifact: Artifact;
  readonly installation: Installation | null;
}

/** What the viewer shows of an owned artifact before its app loads: its title and provider's name. */
export interface ArtifactOverviewRow {
  readonly title: string;
  /** The installation's provider name; null when that installation no longer exists. */
  readonly provider_name: string | null;
}

/** Saved MCP app invocations and the installations they were made with. */
export interface ArtifactStore {
  /** The title and provider name of an artifact `userId` owns (nothing else is read); null when missing or not owned. */
  findOverview(userId: string, artifactId: Id): Promise<ArtifactOverviewRow | null>;
  /** The artifact when `userId` owns it, with its installation, in one read; null when missing or not owned. */
  findOwned(userId: string, artifactId: Id): Promise<OwnedArtifact | null>;
  /**
   * The artifact a ledger message references, when that message is in the ledger the segments
   * describe (a fork's cutoffs apply); null when the message is not visible or carries no reference.
   */
  findReference(segments: readonly LedgerSegment[], messageId: Id): Promise<Id | null>;
}
