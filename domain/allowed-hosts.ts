import { sameHostAndPort, type HostAndPort } from './origin.ts';

/**
 * The hosts a console answers to when `ALLOWED_HOSTS` is unset: the loopback names at its own port.
 * A port of 0 (PORT=0, a test's listener) stands for the port actually listened on.
 */
export function loopbackHosts(port: number): HostAndPort[] {
  return ['localhost', '127.0.0.1', '[::1]'].map((host) => ({ host, port }));
}

/**
 * Whether a request's `Host` (parsed, its port made explicit by the scheme) is one the service
 * answers: DNS rebinding points a name the attacker owns at this service, and the browser then
 * sends that name as `Host`, so a name not listed is never taken as an origin. Ports compare as in
 * the sandbox dispatch rule (80 and 443 alike); an allowed port of 0 means `listened`.
 */
export function isAllowedHost(where: HostAndPort, allowed: readonly HostAndPort[], listened: number): boolean {
  for (const entry of allowed) {
    if (sameHostAndPort(where, entry.port === 0 ? { host: entry.host, port: listened } : entry)) return true;
  }
  return false;
}

/** The hosts of a list with each host and port once, in first-seen order. */
export function distinctHosts(hosts: readonly HostAndPort[]): HostAndPort[] {
  const seen = new Set<string>();
  return hosts.filter(({ host, port }) => {
    const key = `${host} ${port}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
