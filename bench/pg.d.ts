// pg ships no types and @types/pg is not a dependency: the little of it the bare baseline and the fault
// tests (test/faults/xmpp-kill-restart.test.ts: row locks held on a connection of their own) use.
declare module 'pg' {
  export class Pool {
    constructor(config: { connectionString: string; max?: number });
    query(text: string, params?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
    end(): Promise<void>;
  }
  const pg: { Pool: typeof Pool };
  export default pg;
}
