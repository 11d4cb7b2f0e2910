import { HOST_PATTERN, parsePort } from './origin.ts';

/**
 * The one kind of entry a provider may put in a CSP domain list: a plain origin
 * (`https://cdn.example.com`, `wss://live.example.com:8443`), optionally with a leading `*.`
 * subdomain wildcard (`https://*.tiles.example.com`), as CSP host-sources allow.
 *
 * Everything else is dropped: `*`, a bare scheme (`https:`), keywords (`'unsafe-eval'`), paths,
 * and anything with `;`, `,`, quotes, whitespace or control characters, so no list can add a
 * directive, split one, or widen it past named hosts.
 */
const SOURCE_RE = new RegExp(`^(https?|wss?)://((?:\\*\\.)?${HOST_PATTERN})(?::([0-9]{1,5}))?/?$`);

/** The entry in its canonical form (lower case, no trailing slash), or null when it must be dropped. */
export function cspSource(entry: string): string | null {
  const match = SOURCE_RE.exec(entry.toLowerCase());
  if (!match) return null;
  const [, scheme, host, portText] = match as unknown as [string, string, string, string | undefined];
  // A wildcard must leave at least two labels named, so `https://*.com` cannot stand for a TLD.
  if (host.startsWith('*.') && !host.slice(2).includes('.')) return null;
  if (portText !== undefined && parsePort(portText, scheme) === null) return null;
  return `${scheme}://${host}${portText === undefined ? '' : `:${portText}`}`;
}

/** The canonical, de-duplicated plain origins of a list, in their first order. */
export function cspSources(entries: readonly string[]): string[] {
  const kept = new Set<string>();
  for (const entry of entries) {
    const source = cspSource(entry);
    if (source !== null) kept.add(source);
  }
  return [...kept];
}
