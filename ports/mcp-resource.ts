import type { Result } from '../domain/result.ts';

/** Where a provider's MCP server is, and the credential headers it takes (never answered, never logged). */
export interface McpEndpoint {
  readonly server_url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * An MCP app UI resource as fetched, in MCP's own shape: `text` is the HTML (a base64 `blob` is
 * decoded to `text`), and `ui` is the resource's `_meta.ui` as the provider declared it (the content
 * item's, else its `resources/list` entry's), present only when declared.
 */
export interface UiResource {
  readonly uri: string;
  readonly mimeType: string;
  readonly text: string;
  readonly ui?: Readonly<Record<string, unknown>>;
}

/**
 * Reads a `ui://` resource afresh from a provider's MCP server. Every failure (HTTP error, MCP
 * error, no HTML content, an invalid value, the time-out) is a failed result whose text says why,
 * for the log only; nothing is left connected after it returns.
 */
export type FetchUiResource = (
  endpoint: McpEndpoint,
  uri: string,
  options: { readonly timeoutMs: number },
) => Promise<Result<UiResource, string>>;
