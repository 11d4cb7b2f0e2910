import { isInLedger } from '../../domain/ledger-visibility.ts';
import type { ArtifactStore } from '../../ports/artifact-store.ts';
import type { MemoryState } from './state.ts';

/** Artifacts held in memory. */
export function memoryArtifactStore(state: MemoryState): ArtifactStore {
  return {
    findOverview: async (userId, artifactId) => {
      const artifact = state.artifacts.get(artifactId);
      if (artifact === undefined || artifact.owner !== userId) return null;
      return { title: artifact.title, provider_name: state.installations.get(artifact.installation)?.provider_name ?? null };
    },
    findOwned: async (userId, artifactId) => {
      const artifact = state.artifacts.get(artifactId);
      if (artifact === undefined || artifact.owner !== userId) return null;
      return { artifact, installation: state.installations.get(artifact.installation) ?? null };
    },
    findReference: async (segments, messageId) => {
      const message = state.messages.get(messageId);
      return message !== undefined && isInLedger(segments, message) ? message.artifact_id : null;
    },
  };
}
