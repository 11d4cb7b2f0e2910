// pg ships no types and @types/pg is not a dependency: the little of it the bare baseline, the embedded
// socket's test and the fault tests (test/faults/xmpp-kill-restart.test.ts: row locks held on a connection of their own) use.
declare module 'pg' {
  export class Pool {
    constructor(config: { connectionString: string; max?: number });
    query(text: string, params?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
    end(): Promise<void>;
  }
  /** One connection (test/adapters/embedded-wire.test.ts: the embedded socket as a driver sees it). */
  export class Client {
    constructor(config: string | { connectionString: string });
    connect(): Promise<void>;
    query(text: string, params?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
    on(event: 'error', listener: (error: Error) => void): this;
    end(): Promise<void>;
  }
  const pg: { Pool: typeof Pool; Client: typeof Client };
  export default pg;
}
