import pino, { type DestinationStream, type Logger } from 'pino';

const SQL_START = /^\s*(select|insert|update|delete|with|create|alter|drop|begin|commit)\b/i;

/** How deep a chain of causes (and aggregated errors) is followed; past it, the rest is cut. */
const MAX_CAUSE_DEPTH = 6;

/**
 * Errors as logged, causes included: a plain object of each error's type, message and stack (and
 * its other fields), with its `cause` and an AggregateError's `errors` cleaned the same way. A
 * database error keeps only its type, its code (the SQLSTATE) and the database's own short reason:
 * the driver puts the statement, with its values inlined (an installation's credential headers, a
 * user's text), in the message, the stack and fields such as `detail`. Pure: the error is not touched.
 */
export function safeError(error: unknown): unknown {
  return clean(error, 0, new Set());
}

interface LoggedError {
  type: string;
  message: string;
  [field: string]: unknown;
}

function clean(error: unknown, depth: number, seen: Set<object>): unknown {
  if (!isErrorLike(error)) return error;
  if (seen.has(error)) return { type: typeOf(error), message: '[circular]' };
  if (isDatabaseError(error)) return { type: typeOf(error), code: (error as { code?: unknown }).code, message: databaseReason(error) };
  const logged: LoggedError = { type: typeOf(error), message: error.message };
  if (typeof error.stack === 'string') logged.stack = error.stack;
  const within = new Set(seen).add(error);
  const follow = (inner: unknown): unknown => (depth >= MAX_CAUSE_DEPTH ? { type: 'Error', message: '[causes cut]' } : clean(inner, depth + 1, within));
  for (const [key, value] of Object.entries(error)) {
    if (key === 'cause' || key === 'errors' || typeof value === 'function') continue;
    logged[key] = isErrorLike(value) ? follow(value) : value;
  }
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (cause !== undefined) logged.cause = isErrorLike(cause) ? follow(cause) : cause;
  if (Array.isArray(errors)) logged.aggregateErrors = errors.map(follow);
  return logged;
}

function isErrorLike(value: unknown): value is Error {
  return value instanceof Error || (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string' && 'stack' in value);
}

function typeOf(error: Error): string {
  const name = error.constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : String(error.name);
}

/**
 * Whether the error comes from the database driver: a message that is a statement, a `sql` field,
 * or the fields of a PostgreSQL error response (pg's DatabaseError, and MikroORM's exceptions,
 * which copy them).
 */
function isDatabaseError(error: Error): boolean {
  if (SQL_START.test(error.message) || 'sql' in error || 'sqlState' in error) return true;
  const fields = error as { severity?: unknown; routine?: unknown; code?: unknown };
  return typeof fields.severity === 'string' && typeof fields.code === 'string' && 'routine' in error;
}

/**
 * The database's own reason, without the statement before it and the detail after it: the driver
 * writes `<statement with values> - <reason>`, and MikroORM adds a line ` - detail: <the row's
 * values>`. The ` - ` is found outside the statement's quoted literals and identifiers, so a value
 * holding one cannot pass for the reason. A quoted part of the reason that is not one of the error's
 * object names (`column "name"`, `constraint "users_pkey"`) is a value (`invalid input syntax for
 * type uuid: "…"`): it is replaced.
 */
function databaseReason(error: Error): string {
  const message = error.message;
  const cut = statementEnd(message);
  if (cut < 0 && SQL_START.test(message)) return 'database error';
  let reason = cut < 0 ? message : message.slice(cut + 3);
  // Only the first line: MikroORM appends the error's `detail` (`Failing row contains (…)`, the row's values).
  reason = reason.split('\n', 1)[0]!;
  const fields = error as unknown as Record<string, unknown>;
  const names = new Set(['schema', 'table', 'column', 'dataType', 'constraint'].map((key) => fields[key]).filter((name) => typeof name === 'string'));
  return reason.replace(/"[^"]*"/g, (quoted) => (names.has(quoted.slice(1, -1)) ? quoted : '"[value]"'));
}

/** Where the first ` - ` outside quotes is (`'…'` literals with `''` inside, `"…"` identifiers), or -1. */
function statementEnd(message: string): number {
  let quote: string | null = null;
  for (let i = 0; i < message.length; i++) {
    const char = message[i]!;
    if (quote !== null) {
      if (char !== quote) continue;
      if (message[i + 1] === quote) i++; // a doubled quote stays inside
      else quote = null;
    } else if (char === "'" || char === '"') quote = char;
    else if (message.startsWith(' - ', i)) return i;
  }
  return -1;
}

/**
 * A query parameter whose value is a credential: its name, in any case, contains `auth`, `token`,
 * `key`, `secret`, `pass`, `pwd`, `credential`, `signature` or `session`, or it is `sig` or `code`
 * (`?token=`, `?access_token=`, `?api_key=`, `?X-Amz-Signature=`, an OAuth `?code=`, ...).
 */
export const SECRET_PARAMETER = /auth|token|key|secret|pass|pwd|credential|signature|session|^sig$|^code$/i;

/** A field whose value is a password whatever it holds (a chat bot's, a connection's): `password`, `passwd`, `xmppPassword`, ... (not `password_env`, a variable's name). */
export const SECRET_FIELD = /^(pass|passwd|password|passphrase)$|password$/i;

/** What a redacted value reads as. */
export const REDACTED = '[redacted]';

// An absolute URL's scheme and authority (where `user:password@` lives), up to its path, query or end.
const AUTHORITY = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#'"<>]*)/gi;
// One `name=value` of a query (after `?`, `&` or `;`), in a URL or in any text that quotes one.
const PARAMETER = /([?&;])([^=&#\s'"<>?]+)=([^&#\s'"<>]*)/g;

/**
 * `text` with the credentials of every URL in it redacted: the password of a `user:password@`
 * (`postgres://console:[redacted]@db/console`) and the value of each query parameter whose name
 * says it is a credential (`?api_key=[redacted]`). The rest stays, so a line still says where.
 */
export function redactUrls(text: string): string {
  if (!text.includes('=') && !text.includes('@')) return text;
  return text
    .replace(AUTHORITY, (whole, scheme: string, authority: string) => {
      const at = authority.lastIndexOf('@');
      const colon = authority.indexOf(':');
      if (at < 0 || colon < 0 || colon > at) return whole;
      return `${scheme}${authority.slice(0, colon)}:${REDACTED}${authority.slice(at)}`;
    })
    .replace(PARAMETER, (whole, lead: string, name: string) => {
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A malformed escape: the name as written decides.
      }
      return SECRET_PARAMETER.test(decoded) ? `${lead}${name}=${REDACTED}` : whole;
    });
}

/**
 * Every string in a logged value, with `redactUrls` applied, as JSON would see it (own enumerable
 * fields), bounded in depth; a field named as a password (`SECRET_FIELD`) is redacted whole. Errors are left to the `err` serializer, and values with their own
 * `toJSON` (dates, buffers, URL objects) are left as they are.
 */
function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrls(value);
  if (value === null || typeof value !== 'object' || depth > 8 || value instanceof Error) return value;
  if (Array.isArray(value)) {
    // Copied only when an item changes: most lines hold nothing to redact, and are logged as given.
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = redactDeep(value[i], depth + 1);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  if (value instanceof URL) return redactUrls(value.href);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    const redacted = SECRET_FIELD.test(key) && item !== undefined && item !== null ? REDACTED : redactDeep(item, depth + 1);
    if (redacted !== item) (out ??= { ...value })[key] = redacted;
  }
  return out ?? value;
}

/** What an error logs as (`safeError`), with the credentials of any URL in it redacted. */
const errSerializer = (error: unknown): unknown => redactDeep(safeError(error));

/**
 * The service's logger: levels from the config; errors through `safeError`; nothing else bound at
 * the top. Every line passes through `redactUrls`: its message, its fields and its child bindings, so a
 * URL's password or credential parameter (a `DATABASE_URL`, an MCP `server_url`, a request target)
 * never reaches the log, whoever logs it.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    serializers: { err: errSerializer },
    formatters: { log: (object) => redactDeep(object) as Record<string, unknown> },
    hooks: {
      logMethod(args, method) {
        const redacted: unknown[] = args.map((arg) => (typeof arg === 'string' ? redactUrls(arg) : arg));
        // An error logged alone takes its message as the line's: given here, redacted.
        if (redacted[0] instanceof Error && typeof redacted[1] !== 'string') redacted.splice(1, 0, redactUrls(redacted[0].message));
        return method.apply(this, redacted as Parameters<typeof method>);
      },
    },
  };
  const logger = destination === undefined ? pino(options) : pino(options, destination);
  // pino formats a child's bindings with no hook of ours: redacted here. Every child inherits this
  // `child` from the root (a child is created from its parent's prototype), so all levels are covered.
  const child = logger.child as unknown as (this: Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) => Logger;
  logger.child = function (this: Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) {
    return child.call(this, redactDeep(bindings) as pino.Bindings, childOptions);
  } as unknown as Logger["child"];
  return logger;
}

/** The `request` line the edge writes as every request ends (src/http/edge.ts). */
export type RequestLine = (reqId: string, method: string, path: string, status: number, ms: number, aborted: boolean) => void;

interface PinoInternals {
  readonly [key: symbol]: unknown;
}

/**
 * The access line, `log.info({ reqId, method, path, status, ms, aborted }, 'request')`, written as the
 * very bytes pino writes for it (a test compares them) but built as one string: pino's level prefix,
 * time and bindings, then the fields, onto pino's own stream. The generic path costs more than the rest
 * of a small answer's work at the edge (the hook, the redaction walk over every field, pino's loop over
 * the object): here the fields are known. The id is a plain token (the edge accepts no other) and the
 * method one node's parser knows; the path, which the client chose, is redacted as every line is
 * (`redactUrls`) and escaped. A logger without pino's internals (or with a mixin, or a stream that wants
 * metadata) gets the generic line.
 */
export function requestLine(log: Logger): RequestLine {
  const generic: RequestLine = (reqId, method, path, status, ms, aborted) => log.info({ reqId, method, path, status, ms, aborted: aborted || undefined }, 'request');
  const inner = log as unknown as PinoInternals;
  const { streamSym, lsCacheSym, timeSym, chindingsSym, mixinSym, needsMetadataGsym, messageKeySym, endSym, nestedKeySym } = pino.symbols;
  const stream = inner[streamSym] as { write: (line: string) => void; [key: symbol]: unknown } | undefined;
  const prefix = (inner[lsCacheSym] as Record<number, string> | undefined)?.[30];
  const time = inner[timeSym];
  const end = inner[endSym];
  if (typeof end !== 'string' || inner[nestedKeySym] !== null && inner[nestedKeySym] !== undefined) return generic;
  if (stream === undefined || typeof stream.write !== 'function' || prefix === undefined || typeof time !== 'function' || inner[mixinSym] !== undefined || inner[messageKeySym] !== 'msg' || stream[needsMetadataGsym] === true) return generic;
  return (reqId, method, path, status, ms, aborted) => {
    if (!log.isLevelEnabled('info')) return;
    stream.write(
      `${prefix}${(time as () => string)()}${inner[chindingsSym] as string},"reqId":"${reqId}","method":${JSON.stringify(method)},"path":${JSON.stringify(redactUrls(path))},"status":${status},"ms":${ms}${aborted ? ',"aborted":true' : ''},"msg":"request"${end}`,
    );
  };
}
