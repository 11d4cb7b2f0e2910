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

/** The service's logger: levels from the config; errors through `safeError`; nothing else bound at the top. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, serializers: { err: safeError } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
