import type * as acp from '@agentclientprotocol/sdk';

/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

/**
 * Hides every occurrence of each secret in a text (an agent's stderr line, its error message): the
 * longest first, so a secret that holds another is hidden whole. No secrets: the text as it is.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const sorted = [...new Set(secrets.filter((secret) => secret !== ''))].sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return (text) => text;
  return (text) => sorted.reduce((out, secret) => out.split(secret).join(REDACTED), text);
}

/** JSON-RPC error code of ACP's `auth_required`. */
export const AUTH_REQUIRED = -32000;

/**
 * The reason a run records when the agent wants authentication (an `auth_required` error): the ids
 * of the methods its `initialize` answer offered, made plain (they are the agent's words, so only
 * short identifier characters are kept), and what to do. Never the agent's own error text.
 */
export function authenticationReason(methods: readonly acp.AuthMethod[]): string {
  const ids = methods
    .map((method) => method.id.replace(/[^A-Za-z0-9._:-]/g, '').slice(0, 40))
    .filter((id) => id !== '')
    .slice(0, 5);
  const offered = ids.length === 0 ? 'it offers no method' : `it offers ${ids.join(', ')}`;
  return `the agent needs authentication (${offered}); give it credentials through its env or env_pass`;
}

/** The reason of a start that failed: how the process ended, or what it answered, as a sentence. */
export function startupReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith('the agent needs authentication')) return message;
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (code === 'ENOENT' || /\bENOENT\b/.test(message)) return 'the agent could not start: its command was not found';
  if (code === 'EACCES' || /\bEACCES\b/.test(message)) return 'the agent could not start: its command is not executable';
  return `the agent could not start: ${message.replace(/^the agent (process )?/, '')}`;
}
