/**
 * Web origins as this service compares them: scheme, host and port, written without a trailing
 * slash. Pure string work, no URL parser, so the rules behave the same in every runtime.
 */

/** An http(s) origin with its port made explicit. */
export interface Origin {
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly port: number;
}

/** Where a request says it is going: the host and port of its `Host` header. */
export interface HostAndPort {
  readonly host: string;
  readonly port: number;
}

const LABEL = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?';
const REG_NAME = `${LABEL}(?:\\.${LABEL})*`;
const IPV6 = '\\[[0-9a-f:.]+\\]';
/** A host: a registered name, an IPv4 address (which the name rule covers) or a bracketed IPv6 address. */
export const HOST_PATTERN = `(?:${REG_NAME}|${IPV6})`;
const PORT = '[0-9]{1,5}';

const ORIGIN_RE = new RegExp(`^(https?)://(${HOST_PATTERN})(?::(${PORT}))?/?$`);
const HOST_HEADER_RE = new RegExp(`^(${HOST_PATTERN})(?::(${PORT}))?$`);

/** The port a scheme implies when none is written. */
export function defaultPort(scheme: string): number {
  return scheme === 'https' || scheme === 'wss' ? 443 : 80;
}

/** A port number as written, or null when it is not 1 to 65535. */
export function parsePort(text: string | undefined, scheme: string): number | null {
  if (text === undefined) return defaultPort(scheme);
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * Parses `scheme://host[:port]` with an optional trailing slash; scheme and host are compared
 * case-insensitively. Anything else (a path, a query, credentials, another scheme) is null.
 */
export function parseOrigin(text: string): Origin | null {
  const match = ORIGIN_RE.exec(text.toLowerCase());
  if (!match) return null;
  const scheme = match[1] as 'http' | 'https';
  const port = parsePort(match[3], scheme);
  return port === null ? null : { scheme, host: match[2]!, port };
}

/** The origin as text: no trailing slash, and no port when it is the scheme's default. */
export function formatOrigin(origin: Origin): string {
  const port = origin.port === defaultPort(origin.scheme) ? '' : `:${origin.port}`;
  return `${origin.scheme}://${origin.host}${port}`;
}

/** Parses a `Host` header value; the port defaults to the one the request's scheme implies. */
export function parseHostHeader(value: string, scheme: 'http' | 'https'): HostAndPort | null {
  const match = HOST_HEADER_RE.exec(value.toLowerCase());
  if (!match) return null;
  const port = parsePort(match[2], scheme);
  return port === null ? null : { host: match[1]!, port };
}

/** Same scheme, host and port. */
export function sameOrigin(a: Origin, b: Origin): boolean {
  return a.scheme === b.scheme && a.host === b.host && a.port === b.port;
}

const WEB_PORTS = new Set([80, 443]);

/**
 * Same host and port, where 80 and 443 count as equal when both sides use one of them: the
 * sandbox-origin dispatch rule, which lets a TLS-terminating proxy forward to a plain listener.
 */
export function sameHostAndPort(a: HostAndPort, b: HostAndPort): boolean {
  if (a.host !== b.host) return false;
  return a.port === b.port || (WEB_PORTS.has(a.port) && WEB_PORTS.has(b.port));
}

const ABSOLUTE_TARGET_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/;

/**
 * The host an absolute-form request target names (`http://host:port/path`, RFC 9112 3.2.2), its port
 * made explicit by the target's own scheme; null for a target in any other form (`/path`, `*`);
 * `invalid` for one whose scheme is not http(s), that carries userinfo (`user@`, which RFC 9110
 * 4.2.4 says to take for an error), or whose authority is not a host.
 */
export function absoluteTargetHost(target: string): HostAndPort | 'invalid' | null {
  const match = ABSOLUTE_TARGET_RE.exec(target);
  if (match === null) return null;
  const scheme = match[1]!.toLowerCase();
  const authority = match[2]!;
  if ((scheme !== 'http' && scheme !== 'https') || authority.includes('@')) return 'invalid';
  return parseHostHeader(authority, scheme) ?? 'invalid';
}
