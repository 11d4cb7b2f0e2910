import { randomUUID } from 'node:crypto';
import type { BusSignal } from '../../ports/event-bus.ts';
import { MAX_PAYLOAD_BYTES } from './notify-connection.ts';

/**
 * One notification of a signal: `o` the sending instance, `m` the signal's id, part `i` of `n`,
 * `d` a slice of the signal's JSON. A signal has no other copy to read back (an answer's text can
 * be long), so one that does not fit in a payload is sent in parts, in one transaction.
 */
export interface SignalChunk {
  readonly o: string;
  readonly m: string;
  readonly i: number;
  readonly n: number;
  readonly d: string;
}

/** Room for everything but `d` (two UUIDs, two counters, the keys), with a margin. */
const ENVELOPE_BYTES = 200;

/** Bytes a character costs inside a JSON string (quotes and backslashes are escaped; controls become \uXXXX). */
const costOf = (char: string): number => Buffer.byteLength(JSON.stringify(char)) - 2;

/** Cuts a signal into chunks whose payloads each fit; whole code points only, so no slice is malformed. */
export function chunkSignal(origin: string, signal: BusSignal): SignalChunk[] {
  const text = JSON.stringify(signal);
  const budget = MAX_PAYLOAD_BYTES - ENVELOPE_BYTES;
  const slices: string[] = [];
  let slice = '';
  let bytes = 0;
  for (const char of text) {
    const cost = costOf(char);
    if (bytes + cost > budget) {
      slices.push(slice);
      slice = '';
      bytes = 0;
    }
    slice += char;
    bytes += cost;
  }
  slices.push(slice);
  const m = randomUUID();
  return slices.map((d, i) => ({ o: origin, m, i, n: slices.length, d }));
}

/** Puts signals back together from their chunks, which arrive in order (one transaction, one sender). */
export class SignalAssembler {
  private readonly partial = new Map<string, string[]>();

  /** Answers the signal once its last chunk is in, else null. */
  add(chunk: SignalChunk): BusSignal | null {
    if (chunk.n === 1) return JSON.parse(chunk.d) as BusSignal;
    const parts = this.partial.get(chunk.m) ?? [];
    parts[chunk.i] = chunk.d;
    this.partial.set(chunk.m, parts);
    if (parts.filter((part) => part !== undefined).length < chunk.n) return null;
    this.partial.delete(chunk.m);
    return JSON.parse(parts.join('')) as BusSignal;
  }

  /** Forgets signals cut short (their remaining chunks were lost with the connection). */
  clear(): void {
    this.partial.clear();
  }
}
