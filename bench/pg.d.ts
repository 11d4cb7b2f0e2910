// pg ships no types and @types/pg is not a dependency: the little of it the bare baseline uses.
declare module 'pg' {
  export class Pool {
    constructor(config: { connectionString: string; max?: number });
    query(text: string): Promise<{ rows: Record<string, unknown>[] }>;
    end(): Promise<void>;
  }
  const pg: { Pool: typeof Pool };
  export default pg;
}
