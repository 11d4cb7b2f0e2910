import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** The baseline of the fan-out benchmark: a bare `ws` server that sends each frame to every client. */
export interface BareBroadcast {
  readonly port: number;
  /** Serializes the event once and sends the text to every open client, as the service's frame cache does. */
  readonly publish: (event: unknown) => void;
  readonly close: () => Promise<void>;
}

/** A `ws` server on loopback, port 0: no authentication, no routing, no log, no per-socket queue. */
export async function startBareBroadcast(): Promise<BareBroadcast> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 4096 });
  await once(wss, 'listening');
  return {
    port: (wss.address() as AddressInfo).port,
    publish(event) {
      const text = JSON.stringify(event);
      for (const ws of wss.clients) ws.send(text);
    },
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
