import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { blockedAddress, isIpAddress } from '../../domain/ip-ranges.ts';
import { hostListed, normalHost } from '../../domain/webhook-url.ts';
import type { PostWebhook, WebhookOutcome } from '../../ports/webhook-post.ts';

/** A try that has no answer after this long is given up (contract section 12). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Bytes of an answer's body read at most; the rest is not waited for. Nothing of it is kept. */
export const WEBHOOK_BODY_MAX = 64 * 1024;

/** Resolves a name to its addresses (every family); `dns.lookup`'s by default, the system resolver's answer. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** The error a lookup answers when every address of a name is refused: the try is `blocked`, with the reason. */
class BlockedAddress extends Error {
  readonly code = 'EWEBHOOKBLOCKED';
}

/**
 * Webhook tries with node:http and node:https. The name is resolved here, by the request's own `lookup`, and
 * every address it resolves to is checked (domain/ip-ranges.ts) unless the host is in WEBHOOK_ALLOWED_HOSTS;
 * the connection is made only to an address that passed, the one just checked: no second resolution can
 * point it elsewhere (DNS rebinding). A host written as an address is checked the same, before connecting.
 * No redirect is followed (node:http never does: a 3xx is an answer, and not a 2xx); a try has 10 s in all;
 * at most 64 KiB of the answer's body is read, and none of it kept or logged. No connection is reused.
 */
export function nodeWebhookPost(options: {
  /** WEBHOOK_ALLOWED_HOSTS, normal (domain/webhook-url.ts). */
  readonly allowedHosts: readonly string[];
  readonly timeoutMs?: number;
  readonly maxBodyBytes?: number;
  /** How names are resolved; the system's by default (tests answer their own). */
  readonly resolve?: Resolve;
  /** Certificate authorities an https receiver's certificate may chain to, in place of Node's (tests: their own); never a way to skip the check. */
  readonly ca?: string;
}): PostWebhook {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const maxBody = options.maxBodyBytes ?? WEBHOOK_BODY_MAX;
  const resolve = options.resolve ?? systemResolve;
  // Connections kept open between tries to one receiver (its host and port): each was made to an address the
  // lookup below checked, so a kept one is as safe as a new one. Idle ones do not hold the process up.
  const agents = { 'http:': new http.Agent({ keepAlive: true, timeout: timeoutMs }), 'https:': new https.Agent({ keepAlive: true, timeout: timeoutMs }) };

  return (request) => new Promise<WebhookOutcome>((settle) => {
    let done = false;
    const finish = (outcome: WebhookOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle(outcome);
    };
    const timer = setTimeout(() => {
      finish({ kind: 'timed_out' });
      req?.destroy();
    }, timeoutMs);

    const url = new URL(request.url);
    const host = normalHost(url.hostname);
    const listed = hostListed(host, options.allowedHosts);
    if (isIpAddress(host)) {
      const reason = listed ? null : blockedAddress(host);
      if (reason !== null) return finish({ kind: 'blocked', reason: `${host} is a ${reason} address` });
    }
    /** Resolves, keeps the addresses that may be connected to, and answers them as `net.connect` asked (one, or all). */
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      resolve(hostname).then((addresses) => {
        const usable = listed ? addresses : addresses.filter((a) => blockedAddress(a.address) === null);
        if (usable.length === 0) {
          const reasons = addresses.map((a) => `${a.address} is a ${blockedAddress(a.address) ?? 'refused'} address`);
          throw new BlockedAddress(reasons.length === 0 ? `${hostname} resolves to no address` : reasons.join('; '));
        }
        const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const fitting = family === 0 ? usable : usable.filter((a) => a.family === family);
        if (fitting.length === 0) throw new BlockedAddress(`${hostname} has no usable IPv${family} address`);
        if (lookupOptions.all === true) (callback as (e: null, a: LookupAddress[]) => void)(null, fitting);
        else callback(null, fitting[0]!.address, fitting[0]!.family);
      }).catch((error: unknown) => callback(error as NodeJS.ErrnoException, '', 0));
    };

    const client = url.protocol === 'https:' ? https : http;
    const body = Buffer.from(request.body, 'utf8');
    let req: http.ClientRequest | undefined;
    try {
      req = client.request({
        method: 'POST',
        protocol: url.protocol,
        hostname: host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...request.headers, 'content-length': String(body.length) },
        lookup,
        agent: url.protocol === 'https:' ? agents['https:'] : agents['http:'],
        servername: isIpAddress(host) ? undefined : host,
        ...(options.ca === undefined || url.protocol !== 'https:' ? {} : { ca: options.ca }),
      });
    } catch (error) {
      return finish({ kind: 'unreachable', reason: error instanceof Error ? error.message : 'request refused' });
    }
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      // The body is counted and let go: never kept, never logged.
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= maxBody) {
          finish({ kind: 'answered', status });
          res.destroy();
        }
      });
      res.on('end', () => finish({ kind: 'answered', status }));
      res.on('close', () => finish({ kind: 'answered', status }));
      res.on('error', () => finish({ kind: 'answered', status }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof BlockedAddress) return finish({ kind: 'blocked', reason: error.message });
      finish({ kind: 'unreachable', reason: error.code ?? error.message });
    });
    req.end(body);
  });
}
