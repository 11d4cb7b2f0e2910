import { sandboxUrl } from '../domain/sandbox-policy.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { ask } from '../test/support/http.ts';
import { recordedHeaders, startBareStatic } from './bare-http.ts';
import { startBenchService } from './bench-service.ts';
import { sideBySide, type LoadTool, type SideBySide } from './load.ts';

export interface Measured extends SideBySide {
  readonly path: string;
  readonly request: string;
}

/**
 * The sandbox proxy page and its script on the sandbox origin, each beside a bare `node:http` server
 * answering the bytes and headers the service answered once (so the baseline does no work at all).
 */
export async function sandboxSideBySide(tool: LoadTool, load: { rounds: number; seconds: number; connections: number }): Promise<Measured[]> {
  const service = await startBenchService(createMemoryStorage());
  const host = `sandbox.localhost:${service.port}`;
  const policy = {
    parentOrigin: `http://localhost:${service.port}`,
    csp: { resourceDomains: ['https://cdn.example.com'], connectDomains: ['https://api.example.com'], frameDomains: [], baseUriDomains: [] },
  };
  const page = new URL(sandboxUrl(`http://${host}`, policy));
  const paths = [
    { name: 'sandbox proxy page', path: page.pathname + page.search, shown: '/artifacts/sandbox?policy=…' },
    { name: 'sandbox proxy script', path: '/artifacts/sandbox.js', shown: '/artifacts/sandbox.js' },
  ];
  const results: Measured[] = [];
  try {
    for (const { name, path, shown } of paths) {
      const answer = await ask(service.port, { path, headers: { host } });
      if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}: ${answer.text}`);
      const bare = await startBareStatic(recordedHeaders(answer.headers), Buffer.from(answer.text, 'utf8'));
      try {
        const measured = await sideBySide(
          tool,
          { url: `http://127.0.0.1:${service.port}${path}`, headers: { host } },
          { url: `http://127.0.0.1:${bare.port}${path}`, headers: { host } },
          load,
        );
        results.push({ path: name, request: `GET ${shown} (Host: sandbox.localhost), ${answer.text.length} bytes`, ...measured });
      } finally {
        await bare.close();
      }
    }
  } finally {
    await service.close();
  }
  return results;
}
