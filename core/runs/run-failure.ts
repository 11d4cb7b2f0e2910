import type { RunErrorCode } from '../../domain/run-errors.ts';
import { StorageUnavailableError } from '../../ports/storage.ts';

/** PostgreSQL's SQLSTATE: five digits or capitals (22P02, 57P01...). */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Why a turn failed, as a run records it. A storage error's message holds its statement and
 * values, so only its kind is kept; the agent runner's own messages ("the agent process exited with
 * status 1") are kept, cut short; anything else is a bug, recorded without detail (and logged).
 */
export function failureOf(error: unknown): { readonly code: RunErrorCode; readonly reason?: string } {
  if (error instanceof StorageUnavailableError) return { code: 'storage_failed', reason: 'storage was unreachable while the turn was recorded' };
  if (!(error instanceof Error)) return { code: 'internal' };
  const code = (error as { code?: unknown }).code;
  if ('sql' in error || (typeof code === 'string' && SQLSTATE.test(code)) || /Exception$/.test(error.name)) return { code: 'storage_failed' };
  if (error.message.startsWith('the agent')) return { code: 'agent_failed', reason: error.message };
  return { code: 'internal' };
}
