import { Worker } from 'node:worker_threads';
import { freePort } from './free-port.ts';

/**
 * A real OpenID Connect provider for the sign-in tests: oidc-provider 9, certified, on 127.0.0.1 (in a
 * worker thread, see oidc-provider-thread.mjs), with the accounts and clients a test gives it, its
 * development login and consent pages, and a clock the test moves.
 */

export interface TestAccount {
  readonly sub: string;
  readonly email: string;
  readonly email_verified: boolean;
  readonly name: string;
}

export interface TestClient {
  readonly client_id: string;
  readonly client_secret: string;
  readonly redirect_uris: readonly string[];
}

export interface TestProvider {
  /** `http://127.0.0.1:<port>`, as the provider names itself (no trailing slash). */
  readonly issuer: string;
  readonly port: number;
  /**
   * Sets the provider's clock `seconds` away from the real time (negative: in the past). Its tokens' iat
   * and exp follow; the test's own clock and the client library's do not move.
   */
  setClockOffset(seconds: number): Promise<void>;
  /** Closes the server and ends its thread. */
  close(): Promise<void>;
}

export interface ProviderOptions {
  readonly accounts: readonly TestAccount[];
  /** Each a confidential client with the code grant only, PKCE required, authenticating with HTTP Basic. */
  readonly clients: readonly TestClient[];
  /** A port the test chose (to start a provider where a client was already pointed); a free one by default. */
  readonly port?: number;
  /** How long an ID token lasts: 600 s unless told. */
  readonly idTokenTtlSeconds?: number;
  /** True: the ID token carries no email or name (the spec's strict reading); only the userinfo endpoint does. */
  readonly claimsAtUserinfoOnly?: boolean;
}

export async function startOidcProvider(options: ProviderOptions): Promise<TestProvider> {
  const port = options.port ?? (await freePort());
  const worker = new Worker(new URL('./oidc-provider-thread.mjs', import.meta.url), {
    workerData: { port, accounts: options.accounts, clients: options.clients, idTokenTtlSeconds: options.idTokenTtlSeconds ?? 600, conformIdTokenClaims: options.claimsAtUserinfoOnly === true },
  });
  const listening = new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    const ended = (code: number) => reject(new Error(`the provider's thread ended (${code}) before it listened`));
    const answered = (message: { type?: string; message?: string }) => {
      worker.off('error', failed).off('exit', ended).off('message', answered);
      if (message.type === 'listening') resolve();
      else reject(new Error(`the provider could not listen on ${port}: ${message.message}`));
    };
    worker.on('error', failed).on('exit', ended).on('message', answered);
  });
  await listening.catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  let ids = 0;
  const ask = (message: Record<string, unknown>): Promise<void> =>
    new Promise((resolve, reject) => {
      const id = ids++;
      const answered = (answer: { id?: number }) => {
        if (answer.id !== id) return;
        worker.off('message', answered).off('exit', ended);
        resolve();
      };
      const ended = () => {
        worker.off('message', answered);
        reject(new Error(`the provider's thread ended before it answered ${String(message.type)}`));
      };
      worker.on('message', answered).once('exit', ended);
      worker.postMessage({ ...message, id });
    });

  let closed: Promise<void> | null = null;
  return {
    issuer: `http://127.0.0.1:${port}`,
    port,
    setClockOffset: (seconds) => ask({ type: 'clock', offsetSeconds: seconds }),
    close: () => {
      closed ??= ask({ type: 'close' }).then(async () => void (await worker.terminate()));
      return closed;
    },
  };
}

/**
 * Signs `accountId` in through the provider's development pages, as a browser would with a fresh cookie
 * jar: from the authorization URL through login and consent. Answers the URL the provider redirects to
 * at `redirectUri` (the callback, with `code` and `state`, or `error`), without following it.
 */
export function signIn(authorizationUrl: string, redirectUri: string, accountId: string): Promise<URL> {
  return walk(authorizationUrl, redirectUri, { type: 'sign-in', accountId });
}

/** As {@link signIn}, but the person cancels at the login page: the callback carries `error=access_denied`. */
export function decline(authorizationUrl: string, redirectUri: string): Promise<URL> {
  return walk(authorizationUrl, redirectUri, { type: 'decline' });
}

async function walk(authorizationUrl: string, redirectUri: string, intent: { type: 'sign-in'; accountId: string } | { type: 'decline' }): Promise<URL> {
  const jar = new Map<string, string>();
  let next = new URL(authorizationUrl);
  let request: { method: 'GET' | 'POST'; body?: URLSearchParams } = { method: 'GET' };
  for (let steps = 0; steps < 20; steps++) {
    const response = await fetch(next, {
      method: request.method,
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      // Expiry is left alone: the provider's clock may be moved. A deleted cookie comes with no value.
      if (value === '') jar.delete(name);
      else jar.set(name, value);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const target = new URL(location, next);
      if (target.href.startsWith(redirectUri)) return target;
      next = target;
      request = { method: 'GET' };
      continue;
    }
    const page = await response.text();
    if (response.status !== 200 || !/^\/interaction\/[^/]+$/.test(next.pathname)) {
      throw new Error(`the provider answered ${response.status} at ${next.pathname}: ${page.slice(0, 300)}`);
    }
    // An interaction page: its form names the prompt (login, then consent).
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    if (intent.type === 'decline') {
      next = new URL(`${next.pathname}/abort`, next);
      request = { method: 'GET' };
    } else if (prompt === 'login') {
      request = { method: 'POST', body: new URLSearchParams({ prompt: 'login', login: intent.accountId, password: 'any' }) };
    } else if (prompt === 'consent') {
      request = { method: 'POST', body: new URLSearchParams({ prompt: 'consent' }) };
    } else {
      throw new Error(`an interaction page with no prompt the test knows: ${page.slice(0, 300)}`);
    }
  }
  throw new Error(`no redirect to ${redirectUri} after 20 steps`);
}
