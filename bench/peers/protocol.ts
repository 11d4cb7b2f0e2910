/**
 * How the edge bench talks to a peer it runs in a process of its own (bench/edge-peers.ts; the project
 * itself runs as `npm start` does): the child
 * is forked with an IPC channel, reads what it serves from `PEER_ANSWERS` (JSON) and its log mode from
 * `PEER_LOG` (`warn`: nothing below warn is logged; `default`: the side's own default access logging),
 * and sends `{ port }` once it listens. It exits when the channel closes. Its stdout is /dev/null on
 * every side: each writes its log lines there as it would to a file.
 */
export interface RecordedAnswer {
  /** The path routed (the query, if any, is not part of it). */
  readonly path: string;
  readonly status: number;
  /** Every header but those node writes per answer (date, connection, keep-alive, content-length) and the request id. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, base64. */
  readonly body: string;
}

export type PeerLog = 'warn' | 'default';

export function peerSetup(): { answers: RecordedAnswer[]; log: PeerLog } {
  const answers = JSON.parse(process.env.PEER_ANSWERS ?? '[]') as RecordedAnswer[];
  const log = process.env.PEER_LOG === 'warn' ? 'warn' : 'default';
  return { answers, log };
}

/** Tells the bench the port, and exits when the bench goes away. */
export function listening(port: number, close: () => Promise<unknown>): void {
  process.send?.({ port });
  process.once('disconnect', () => {
    void close().finally(() => process.exit(0));
  });
}
