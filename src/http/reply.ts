import { STATUS_CODES, type ServerResponse } from 'node:http';
import { ERROR_DETAILS, type Failure } from '../../domain/errors.ts';
import type { Result } from '../../domain/result.ts';
import { ERROR_STATUS } from './error-status.ts';

/** What a handler answers; the edge writes it. Bodies are text, bytes, or a value sent as JSON. */
export interface Reply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array | { readonly json: unknown };
}

/** A JSON answer. */
export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: { json: value },
});

/** An answer with no body. */
export const empty = (status: number, headers: Record<string, string> = {}): Reply => ({ status, headers });

/** The problem+json answer for a failure (contract section 3); its status comes from the catalog. */
export function problem(failure: Failure, headers: Record<string, string> = {}): Reply {
  const status = ERROR_STATUS[failure.code];
  const body: Record<string, unknown> = {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail: failure.detail ?? ERROR_DETAILS[failure.code],
    // The catalog code (docs/errors.md): what a client branches on, never the prose.
    code: failure.code,
  };
  if (failure.errors !== undefined) body.errors = failure.errors;
  if (failure.files !== undefined) body.files = failure.files;
  return { status, headers: { 'content-type': 'application/problem+json', ...headers }, body: { json: body } };
}

/** A use case's result as an answer: the value as JSON with `status`, or the failure as problem+json. */
export const result = <T>(status: number, outcome: Result<T, Failure>): Reply =>
  outcome.ok ? json(status, outcome.value) : problem(outcome.error);

/** Headers every answer carries. */
export const BASE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'x-content-type-options': 'nosniff' });

/** Writes a reply; a HEAD request gets the headers alone (node drops the body). */
export function writeReply(res: ServerResponse, reply: Reply): void {
  writeBody(res, reply.status, { ...BASE_HEADERS, ...reply.headers }, reply.body);
}

/** Writes a status, the complete headers (`content-length` is added to them) and a body. */
export function writeBody(res: ServerResponse, status: number, headers: Record<string, string>, body: Reply['body']): void {
  const bytes = body === undefined ? undefined : typeof body === 'object' && 'json' in body ? JSON.stringify(body.json) : body;
  headers['content-length'] = String(bytes === undefined ? 0 : typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength);
  res.writeHead(status, headers);
  res.end(bytes);
}
