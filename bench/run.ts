import { liveFanoutBench } from './live-fanout.ts';
import { messagesPageBench } from './messages-page.ts';

// Every benchmark, one after the other; each writes its section of docs/benchmarks.md.
await messagesPageBench();
await liveFanoutBench();
await (await import('./side-by-side.ts')).sideBySideBench();
