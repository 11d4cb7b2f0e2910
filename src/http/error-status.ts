import type { ErrorCode } from '../../domain/errors.ts';

/** The HTTP status of every error code: the one place where a refusal becomes a status. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = Object.freeze({
  not_found: 404,
  method_not_allowed: 405,
  invalid_host: 400,
  malformed_json: 400,
  unsupported_media_type: 415,
  body_too_large: 413,
  validation_failed: 422,
  unauthenticated: 401,
  cross_origin_refused: 403,
  thread_unavailable: 404,
  conversation_unavailable: 404,
  run_unavailable: 404,
  artifact_unavailable: 404,
  artifact_reference_unavailable: 404,
  artifact_installation_unavailable: 404,
  mcp_resource_failed: 502,
  sandbox_not_configured: 503,
  not_thread_owner: 403,
  upgrade_required: 426,
  conflict: 409,
  agent_unavailable: 409,
  storage_unavailable: 503,
  too_many_connections: 503,
  internal: 500,
});
