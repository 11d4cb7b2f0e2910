/**
 * Expected failures are values, not exceptions: a function that can fail on bad input returns a
 * `Result`, and only a bug throws.
 */
export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

/** A successful result. */
export const ok = <T>(value: T): { readonly ok: true; readonly value: T } => ({ ok: true, value });

/** A failed result. */
export const fail = <E>(error: E): { readonly ok: false; readonly error: E } => ({ ok: false, error });

/** One reason an input was refused: where (a dotted path, `""` for the whole value) and why. */
export interface Issue {
  readonly path: string;
  readonly message: string;
}
