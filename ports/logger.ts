/** What a use case logs through: structured fields, then a message (pino's shape; any host can answer it). */
export interface Logger {
  /** Something worth knowing that went as it should. */
  info(fields: Record<string, unknown>, message: string): void;
  /** Something that went wrong and was handled (a retry, a refusal). */
  warn(fields: Record<string, unknown>, message: string): void;
  /** Something that went wrong and should not have (a bug, an outage). */
  error(fields: Record<string, unknown>, message: string): void;
}
