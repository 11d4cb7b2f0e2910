import type { IncomingMessage } from 'node:http';

/** The session cookie's name (contract section 2). */
export const SESSION_COOKIE = 'console_session';

/** What a token may look like: it travels in a header and a cookie, so no separators or spaces. */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~+/=-]{1,512}$/;

/** The token a request carries: `Authorization: Bearer <token>` first, else the session cookie (`cookie`: the cookie only). */
export function credentialOf(req: IncomingMessage, only?: 'cookie'): string | null {
  const authorization = req.headers.authorization;
  if (authorization !== undefined && only === undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match !== null && TOKEN_PATTERN.test(match[1]!) ? match[1]! : null;
  }
  const cookies = req.headers.cookie;
  if (cookies === undefined) return null;
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return TOKEN_PATTERN.test(value) ? value : null;
    }
  }
  return null;
}

/** The `Set-Cookie` value that stores a session id (HttpOnly, SameSite=Lax, Path=/, Secure on https), kept as long as the session lasts. */
export function sessionCookie(secret: string, secure: boolean, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** The `Set-Cookie` value that clears the session. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}
