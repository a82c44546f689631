/**
 * Real Prometheus software from Debian for the in-cluster runner's metrics (issue 27): a Pushgateway, a Prometheus
 * server scraping it, and promtool. Each is started on a free loopback port with its own config in its own temp
 * dir and stopped by pid (process-hop.ts), never a packaged service.
 */
import { spawn } from 'node:child_process';
import { binaryPath, HopMissingError, startRealHop, type RealHop } from './real-hops/process-hop.js';

/** prometheus-pushgateway without persistence: what a test pushes is all it holds. */
export function startPushgateway(): Promise<RealHop> {
  return startRealHop({
    name: 'pushgateway',
    binary: 'prometheus-pushgateway',
    debianPackage: 'prometheus-pushgateway',
    files: () => ({}),
    args: (_dir, [port]) => [`--web.listen-address=127.0.0.1:${port}`, '--persistence.file='],
  });
}

/**
 * A Prometheus server scraping `targets` every second, with `honor_labels: true` as the Pushgateway's docs ask (the
 * pushed job/location/cluster labels are kept), and evaluating `ruleFiles` (absolute paths) every second;
 * `moreJobs`: further scrape_configs entries, as YAML list items (serve's blackbox-style job).
 */
export async function startPrometheus(targets: readonly string[], ruleFiles: readonly string[] = [], moreJobs = ''): Promise<RealHop> {
  const hop = await startRealHop({
    name: 'prometheus',
    binary: 'prometheus',
    debianPackage: 'prometheus',
    files: () => ({
      'prometheus.yml': [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: ${JSON.stringify(ruleFiles)}`,
        'scrape_configs:',
        '  - job_name: pushgateway',
        '    honor_labels: true',
        `    static_configs: [{ targets: ${JSON.stringify(targets)} }]`,
        moreJobs.replace(/^(?=.)/gm, '  '),
        '',
      ].join('\n'),
    }),
    args: (dir, [port]) => [
      `--config.file=${dir}/prometheus.yml`,
      `--storage.tsdb.path=${dir}/data`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
  });
  try {
    await waitReady(hop.port);
  } catch (err) {
    await hop.stop();
    throw err;
  }
  return hop;
}

/**
 * Prometheus listens before its storage is open and answers queries 503 "Service Unavailable" until then
 * (a busy CI runner made that seconds): wait for /-/ready, which turns 200 when it serves queries.
 */
async function waitReady(port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/-/ready`);
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Prometheus on 127.0.0.1:${port} was not ready within ${timeoutMs / 1000} s (/-/ready: ${last})`);
}

export interface PromtoolRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs promtool with `args`, `input` on its stdin. */
export function promtool(args: readonly string[], input = ''): Promise<PromtoolRun> {
  const bin = binaryPath('promtool');
  if (!bin) return Promise.reject(new HopMissingError('promtool', 'prometheus'));
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** One instant query against a Prometheus server's HTTP API: the vector's samples, labels and value. */
export async function instantQuery(port: number, query: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(query)}`);
  const text = await r.text();
  if (!r.headers.get('content-type')?.includes('json')) throw new Error(`query ${query}: HTTP ${r.status} ${text.slice(0, 200)}`);
  const body = JSON.parse(text) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] } };
  if (body.status !== 'success') throw new Error(`query ${query} failed: ${body.error}`);
  return body.data!.result.map((s) => ({ labels: s.metric, value: Number(s.value[1]) }));
}
