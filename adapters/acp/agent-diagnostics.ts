import type * as acp from '@agentclientprotocol/sdk';

/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

/** The redactor of an agent with no secrets: the text as it is. One function, so a caller can tell there is nothing to hide and skip the work. */
export const unredacted = (text: string): string => text;

/**
 * Hides every occurrence of each secret in a text (an agent's stderr line, its error message): the
 * longest first, so a secret that holds another is hidden whole. No secrets: {@link unredacted}.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const sorted = [...new Set(secrets.filter((secret) => secret !== ''))].sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return unredacted;
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

/**
 * A request the agent answered with an error, as the service keeps it: the JSON-RPC code and a
 * sentence of the service's own. The agent's text (which may quote a provider's body, a key) is
 * neither its message nor its cause, so no `{ err }` log line can carry it: it is logged once,
 * redacted, where it arrives.
 */
export class AgentRequestError extends Error {
  override readonly name = 'AgentRequestError';
  /** The JSON-RPC code the agent answered. */
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.code = code;
  }
}

/** How much of a stderr line is held while it arrives; the rest of a longer line is dropped. */
export const MAX_STDERR_LINE = 64 * 1024;

/**
 * Splits a text stream into lines (`\n`, a `\r` before it dropped), holding at most `max`
 * characters of a line: what comes past that before its newline is dropped as it arrives, so an
 * agent that never ends a line cannot make it grow without bound. `end` gives an unterminated last line.
 */
export function lineSplitter(onLine: (line: string) => void, max = MAX_STDERR_LINE): { push(chunk: string): void; end(): void } {
  let line = '';
  const take = (chunk: string, from: number, to: number) => {
    const room = max - line.length;
    if (room > 0 && to > from) line += chunk.slice(from, Math.min(to, from + room));
  };
  const flush = () => {
    const out = line.endsWith('\r') ? line.slice(0, -1) : line;
    line = '';
    onLine(out);
  };
  return {
    push(chunk) {
      let from = 0;
      for (let newline = chunk.indexOf('\n'); newline >= 0; newline = chunk.indexOf('\n', from)) {
        take(chunk, from, newline);
        flush();
        from = newline + 1;
      }
      take(chunk, from, chunk.length);
    },
    end() {
      if (line !== '') flush();
    },
  };
}
