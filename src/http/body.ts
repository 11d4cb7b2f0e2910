import type { IncomingMessage } from 'node:http';
import type { Failure } from '../../domain/errors.ts';
import { fail, ok, type Result } from '../../domain/result.ts';

/** The client went away before its body ended: nothing to answer, nothing wrong here (logged at debug). */
export class ClientAbortedError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('The client closed the request before its body ended', options);
    this.name = 'ClientAbortedError';
  }
}

/** The largest body any route accepts. */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

/**
 * Reads a JSON request body. An empty body is `undefined` (the route's schema decides whether
 * that is allowed); a declared non-JSON media type is 415; over 1 MiB is 413, refused from
 * `Content-Length` before reading when it is declared; unparseable JSON is 400.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Result<unknown, Failure>> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return fail({ code: 'body_too_large' });
  const read = await collect(req, limit);
  if (read === 'too_large') return fail({ code: 'body_too_large' });
  const size = read.length;
  if (size === 0) return ok(undefined);
  const type = req.headers['content-type'];
  if (type !== undefined && !JSON_TYPE.test(type)) return fail({ code: 'unsupported_media_type' });
  try {
    return ok(JSON.parse(read.toString('utf8')));
  } catch {
    return fail({ code: 'malformed_json' });
  }
}

/**
 * Collects the body up to `limit` bytes. Past the limit it stops keeping data but goes on
 * draining, so the socket stays usable for the 413 answer (which then closes the connection).
 */
function collect(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        resolve('too_large');
      } else {
        chunks.push(chunk);
      }
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    // A request stream fails only when its connection does (reset, closed mid-body, timed out).
    req.once('error', (error) => reject(new ClientAbortedError({ cause: error })));
    req.once('close', () => {
      if (!req.complete) reject(new ClientAbortedError());
    });
  });
}
