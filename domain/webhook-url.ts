import { blockedAddress, isIpAddress, parseIpv6 } from './ip-ranges.ts';

/** The longest URL a webhook takes. */
export const WEBHOOK_URL_MAX = 2_000;

/** A host as WEBHOOK_ALLOWED_HOSTS and the URL rule compare it: lower case, no brackets, no trailing dot. */
export const normalHost = (host: string): string => host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');

/** A host as compared: normal, and an IPv6 address as its eight groups (URL writes `::ffff:10.0.0.1` as `::ffff:a00:1`). */
const compared = (host: string): string => {
  const normal = normalHost(host);
  const groups = normal.includes(':') ? parseIpv6(normal) : null;
  return groups === null ? normal : groups.map((g) => g.toString(16)).join(':');
};

/** Whether `hostname` (a URL's, bracketed or not) is one of the listed hosts (WEBHOOK_ALLOWED_HOSTS). */
export const hostListed = (hostname: string, allowed: readonly string[]): boolean => {
  const host = compared(hostname);
  return allowed.some((entry) => compared(entry) === host);
};

/**
 * The URL rule of a webhook, as it is created: `https:`, or `http:` to a listed host; no user or password in
 * it (they would be shown by every read), no fragment; a host written as an address may not be in a range
 * {@link blockedAddress} refuses unless listed. What a name resolves to is checked where it is connected to, at
 * every send (adapters/node-http): a name's addresses change. Answers the URL as it will be used, or why not.
 */
export function checkWebhookUrl(text: string, allowed: readonly string[]): { readonly ok: true; readonly value: string } | { readonly ok: false; readonly error: string } {
  if (text.length > WEBHOOK_URL_MAX) return { ok: false, error: `must be at most ${WEBHOOK_URL_MAX} characters` };
  const url = URL.canParse(text) ? new URL(text) : null;
  if (url === null) return { ok: false, error: 'must be an absolute URL' };
  const listed = hostListed(url.hostname, allowed);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && listed)) {
    return { ok: false, error: url.protocol === 'http:' ? 'must be https: (http: only to a host in WEBHOOK_ALLOWED_HOSTS)' : 'must be an https: URL' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, error: 'must not carry a user or a password' };
  if (url.hash !== '') return { ok: false, error: 'must not carry a fragment' };
  const host = normalHost(url.hostname);
  if (!listed && isIpAddress(host)) {
    const reason = blockedAddress(host);
    if (reason !== null) return { ok: false, error: `must not name a ${reason} address (unless its host is in WEBHOOK_ALLOWED_HOSTS)` };
  }
  return { ok: true, value: url.href };
}
