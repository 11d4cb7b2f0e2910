/**
 * The database could not be opened at start: unreachable, missing, or refusing the credentials.
 * The message is one line naming the server and the database, never the password.
 */
export class DatabaseOpenError extends Error {
  constructor(clientUrl: string, cause: unknown) {
    super(describe(clientUrl, cause), { cause });
    this.name = 'DatabaseOpenError';
  }
}

function describe(clientUrl: string, cause: unknown): string {
  const url = new URL(clientUrl);
  const server = `${url.hostname}:${url.port || '5432'}`;
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username);
  const code = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message.split('\n')[0]! : String(cause);
  switch (code) {
    case '3D000':
      return `The database "${database}" does not exist on ${server}: create it first (the service never creates a database)`;
    case '28P01':
    case '28000':
      return `The database server at ${server} refused the credentials of "${decodeURIComponent(url.username)}" (${code})`;
    case 'ECONNREFUSED':
      return `Cannot reach the database server at ${server}: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot reach the database server at ${server}: the host name does not resolve`;
    default:
      if (/timeout|timed out/i.test(message)) return `Cannot reach the database server at ${server}: it did not answer in time`;
      return `Cannot open the database "${database}" on ${server}: ${message}`;
  }
}
