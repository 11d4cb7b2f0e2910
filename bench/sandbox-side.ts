import type { SideBySide } from './load.ts';

/**
 * One path's rates beside its baseline, as the side-by-side section shows them. (The sandbox page and
 * script, once measured here in the bench's own process, are now in the edge section: bench/edge-peers.ts.)
 */
export interface Measured extends SideBySide {
  readonly path: string;
  readonly request: string;
}
