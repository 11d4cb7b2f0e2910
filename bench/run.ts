import { liveFanoutBench } from './live-fanout.ts';
import { messagesPageBench } from './messages-page.ts';

// Every benchmark, one after the other; each writes its section of docs/benchmarks.md.
// BENCH_ONLY=edge runs the edge beside its peers alone (bench/edge-peers.ts); BENCH_ONLY=reads the
// thread read and messages page beside their bare baseline alone (bench/reads-bench.ts);
// BENCH_ONLY=instances the two instances on one PostgreSQL beside one (bench/instances.ts);
// BENCH_ONLY=second-start the second start to /readyz (bench/second-start.ts); BENCH_ONLY=turn a turn's
// overhead beside a bare ACP client alone (bench/turn-overhead.ts); BENCH_ONLY=live the live socket
// fan-out beside a bare ws broadcast alone (bench/live-fanout.ts); BENCH_ONLY=slack a Slack reply's round
// trip beside a bare Bolt app alone (bench/slack-round-trip.ts); BENCH_ONLY=checkpoint a turn's checkpoint in a
// repository of 50,000 files beside a bare `git add -A && git commit` alone (bench/checkpoint.ts); BENCH_ONLY=rebuild
// a thread's worktree rebuilt on another instance beside `git clone --reference` and a checkout alone (bench/rebuild.ts);
// BENCH_ONLY=webhooks webhooks out beside a bare fetch loop (bench/webhook-fanout.ts); BENCH_ONLY=schedules 1,000
// schedules due in one second on two instances beside the same directives POSTed (bench/schedule-lag.ts).
if (process.env.BENCH_ONLY === 'edge') {
  await (await import('./edge-peers.ts')).edgePeersBench();
} else if (process.env.BENCH_ONLY === 'reads') {
  await (await import('./reads-bench.ts')).readsBench();
} else if (process.env.BENCH_ONLY === 'instances') {
  await (await import('./instances.ts')).instancesBench();
} else if (process.env.BENCH_ONLY === 'second-start') {
  await (await import('./second-start.ts')).secondStartBench();
} else if (process.env.BENCH_ONLY === 'turn') {
  await (await import('./turn-overhead.ts')).turnOverheadBench();
} else if (process.env.BENCH_ONLY === 'live') {
  await liveFanoutBench();
} else if (process.env.BENCH_ONLY === 'slack') {
  await (await import('./slack-round-trip.ts')).slackRoundTripBench();
} else if (process.env.BENCH_ONLY === 'checkpoint') {
  await (await import('./checkpoint.ts')).checkpointBench();
} else if (process.env.BENCH_ONLY === 'webhooks') {
  await (await import('./webhook-fanout.ts')).webhookFanoutBench();
} else if (process.env.BENCH_ONLY === 'schedules') {
  await (await import('./schedule-lag.ts')).scheduleLagBench();
} else if (process.env.BENCH_ONLY === 'rebuild') {
  await (await import('./rebuild.ts')).rebuildBench();
} else {
  await messagesPageBench();
  await liveFanoutBench();
  await (await import('./reads-bench.ts')).readsBench();
  await (await import('./instances.ts')).instancesBench();
  await (await import('./side-by-side.ts')).sideBySideBench();
  await (await import('./edge-peers.ts')).edgePeersBench();
  await (await import('./second-start.ts')).secondStartBench();
  await (await import('./turn-overhead.ts')).turnOverheadBench();
  await (await import('./slack-round-trip.ts')).slackRoundTripBench();
  await (await import('./checkpoint.ts')).checkpointBench();
  await (await import('./rebuild.ts')).rebuildBench();
  await (await import('./webhook-fanout.ts')).webhookFanoutBench();
  await (await import('./schedule-lag.ts')).scheduleLagBench();
}
