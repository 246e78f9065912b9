// Load generator for bench/translation, run as its own process: autocannon with the options given as JSON in
// argv[2]; prints one JSON line with throughput, latency percentiles and error counts.
import autocannon from 'autocannon';

const opts = JSON.parse(process.argv[2] ?? '{}') as autocannon.Options;
const result = await autocannon({
  ...opts,
  renderProgressBar: false,
  renderResultsTable: false,
  renderLatencyTable: false,
});
const l = result.latency as unknown as Record<string, number>;
process.stdout.write(
  `${JSON.stringify({
    requestsPerSecond: result.requests.average,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: { p50: l.p50, p90: l.p90, p99: l.p99, max: l.max, mean: l.average },
    // The load generator's own CPU (user + system), for the bench's CPU split of the machine.
    cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
  })}\n`,
);
