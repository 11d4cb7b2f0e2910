import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Failure } from '../../domain/errors.ts';
import { answerAndClose } from './raw-reply.ts';
import { problem } from './reply.ts';

/** What the parser's errors (llhttp's `HPE_*` codes) mean, in words of ours: never the bytes the client sent. */
const MALFORMED_DETAILS: Readonly<Record<string, string>> = {
  HPE_INVALID_METHOD: 'The request method is not an HTTP method (methods are case-sensitive: GET, not get)',
  HPE_INVALID_URL: 'The request target is not valid',
  HPE_INVALID_VERSION: 'The HTTP version is not valid',
  HPE_INVALID_CONSTANT: 'The request line is not valid',
  HPE_INVALID_HEADER_TOKEN: 'A header name or value holds a character HTTP does not allow',
  HPE_INVALID_CONTENT_LENGTH: 'The Content-Length header is not valid',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding must not both be given',
  HPE_INVALID_TRANSFER_ENCODING: 'The Transfer-Encoding header is not valid',
  HPE_INVALID_CHUNK_SIZE: 'A chunk size of the body is not valid',
};

/**
 * The refusal for an error the HTTP parser (or its time-outs) raised; null for any other error of
 * the socket (a reset, a broken pipe): the client left, and an answer would go nowhere.
 */
export function parserRefusal(code: string | undefined): Failure | null {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'request_timeout' };
  if (code === 'HPE_HEADER_OVERFLOW') return { code: 'headers_too_large' };
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { code: 'chunk_extensions_too_large' };
  if (code === undefined || !code.startsWith('HPE_')) return null;
  const detail = MALFORMED_DETAILS[code];
  return detail === undefined ? { code: 'malformed_request' } : { code: 'malformed_request', detail };
}

/**
 * The server's `clientError` listener. Node answers the parser's refusals (a bad request line, a
 * character HTTP forbids in a header, headers past the limit, the headers or request time-out) with
 * a bare status line when no one listens; here each is a problem+json answer with an
 * `X-Request-Id`, and one log line (never the raw bytes node keeps in `rawPacket`). As node does, a
 * connection whose current answer has begun is not written to: a second status line would corrupt it.
 */
export function clientErrorListener(log: Logger) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    const failure = parserRefusal(error.code);
    // Set by node on a connection with a response under way; not part of its typed interface.
    const current = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (failure === null || !socket.writable || current?.headersSent === true) {
      log.debug({ code: error.code }, 'connection closed on a client error');
      socket.destroy();
      return;
    }
    const reply = problem(failure);
    const id = randomUUID();
    log.info({ reqId: id, status: reply.status, code: failure.code, reason: error.code }, 'request refused by the HTTP parser');
    answerAndClose(socket, reply, id);
  };
}
