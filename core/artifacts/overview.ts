import type { LedgerEntry } from '../../ports/ledger-store.ts';
import type { Message } from '../../domain/model.ts';

/** Where artifact viewer pages live (the configured viewer origin, null for none, and its path prefix). */
export interface ViewerRouting {
  readonly viewerOrigin: string | null;
  readonly viewerPath: string;
}

/** McpAppOverview: enough to show and open a referenced app, built without contacting the provider. */
export interface McpAppOverview {
  readonly artifact_id: string;
  readonly title: string;
  readonly provider_name: string;
  readonly viewer_url: string;
}

/** A ledger message as the console reads it: the stored row, plus `app` when it references an artifact. */
export type LedgerMessage = Message & { readonly app?: McpAppOverview };

/**
 * Turns a ledger entry into the message answered, offering the overview when a viewer origin is
 * configured. It grants nothing: opening the viewer still needs the artifact's owner. An entry
 * without `app` (most: a message that references nothing) is the message itself, answered as it is:
 * no copy per message.
 */
export function ledgerMessage(config: ViewerRouting) {
  return (entry: LedgerEntry): LedgerMessage => {
    const app = entry.app;
    if (app === undefined) return entry as Message;
    const message: Message = { id: entry.id, role: entry.role, text: entry.text, artifact_id: entry.artifact_id, created_at: entry.created_at, origin: entry.origin };
    if (message.artifact_id === null || config.viewerOrigin === null) return message;
    return {
      ...message,
      app: {
        artifact_id: message.artifact_id,
        title: app.title,
        provider_name: app.provider_name,
        viewer_url: `${config.viewerOrigin}${config.viewerPath}/${message.artifact_id}`,
      },
    };
  };
}
