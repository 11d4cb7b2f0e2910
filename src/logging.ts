import pino, { type DestinationStream, type Logger } from 'pino';

const SQL_START = /^\s*(select|insert|update|delete|with|create|alter|drop|begin|commit)\b/i;

/**
 * Errors as logged. A database error's message starts with its statement, and the driver inlines
 * the statement's values (an installation's credential headers, a user's text): only the database's
 * own reason after the statement is kept, with the error's code.
 */
export function safeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const message = error.message;
  if (SQL_START.test(message) || 'sql' in error) {
    const reason = message.includes(' - ') ? message.slice(message.lastIndexOf(' - ') + 3) : 'database error';
    return { type: error.name, code: (error as { code?: unknown }).code, message: reason };
  }
  return pino.stdSerializers.err(error);
}

/**
 * A query parameter whose value is a credential: its name, in any case, contains `auth`, `token`,
 * `key`, `secret`, `pass`, `pwd`, `credential`, `signature` or `session`, or it is `sig` or `code`
 * (`?token=`, `?access_token=`, `?api_key=`, `?X-Amz-Signature=`, an OAuth `?code=`, ...).
 */
export const SECRET_PARAMETER = /auth|token|key|secret|pass|pwd|credential|signature|session|^sig$|^code$/i;

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
 * fields), bounded in depth. Errors are left to the `err` serializer, and values with their own
 * `toJSON` (dates, buffers, URL objects) are left as they are.
 */
function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrls(value);
  if (value === null || typeof value !== 'object' || depth > 8 || value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1));
  if (value instanceof URL) return redactUrls(value.href);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, depth + 1)]));
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
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redactDeep(bindings) as pino.Bindings, childOptions);
  } as Logger['child'];
  return logger;
}
