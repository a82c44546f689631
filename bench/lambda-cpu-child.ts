/**
 * Child of the Lambda CPU and scale benches: waits until the parent has put it in its cgroup (a line on stdin),
 * then runs the Lambda's plan for `clusters` clusters at once, as the handler does (one start pacer for the
 * invocation), `rounds` times, against the TLS emulator, and prints every session's handshake time, how many
 * sessions failed, the pacer's figures and this process's peak RSS.
 * Modes: `paced` (the pacer as shipped, sized by this process's CPU share), `floor` (one start at a time: the
 * path's own handshake, the peer), `unpaced` (every session at once: the behaviour before the pacer).
 */
import { readFileSync } from 'node:fs';
import { connectionFor } from '../src/kube/credentials.js';
import { parseKubeconfig } from '../src/kube/kubeconfig.js';
import { SecretRedactor } from '../src/kube/secrets.js';
import { runPlan } from '../src/probe/runner.js';
import { StartPacer } from '../src/probe/start-pacer.js';
import type { KeepaliveMode } from '../src/vocabulary.js';

export interface ChildArgs {
  readonly kubeconfig: string;
  readonly rounds: number;
  readonly clusters: number;
  readonly mode: 'paced' | 'floor' | 'unpaced';
  readonly holdsSeconds: readonly number[];
  readonly keepalives: readonly KeepaliveMode[];
}

const args = JSON.parse(process.argv[2]!) as ChildArgs;
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const connection = await connectionFor(parseKubeconfig(readFileSync(args.kubeconfig, 'utf8'), args.kubeconfig), {
  env: {},
  redactor: new SecretRedactor(),
});
const handshakes: Record<string, number[]> = { websocket: [], spdy: [] };
/** The handshakes HandshakeLatency publishes: the unmarked ones (src/metrics/datums.ts). */
const published: Record<string, number[]> = { websocket: [], spdy: [] };
/** Handshakes marked as distorted by our own CPU (src/probe/own-cpu.ts), per transport: not published. */
const distorted: Record<string, number> = { websocket: 0, spdy: 0 };
/** The round (1-based) of each marked handshake, and its time: a first round's marks are a cold process's. */
const marked: Array<{ round: number; transport: string; ms: number; busyMs: number }> = [];
const runMs: number[] = [];
const failures: string[] = [];
let sessions = 0;
let longestWaitMs = 0;
let maxInFlight = 0;
let forcedByWindow = 0;
for (let i = 0; i < args.rounds; i++) {
  const t0 = performance.now();
  // As the handler: one pacer for the invocation, every cluster at once.
  const pacer = args.mode === 'unpaced' ? null : new StartPacer(args.mode === 'floor' ? { maxInFlight: 1 } : {});
  const reports = await Promise.all(
    Array.from({ length: args.clusters }, (_, c) =>
      runPlan(
        {
          location: 'bench',
          cluster: {
            name: `lab-${c}`,
            connection: { ...connection, dialTimeoutMs: 5_000, upgradeTimeoutMs: 10_000 },
            namespace: 'default',
            pod: 'probe-target',
            port: 8080,
          },
          operations: ['exec', 'portforward'],
          transports: ['websocket', 'spdy'],
          keepalives: [...args.keepalives],
          holdsSeconds: [...args.holdsSeconds],
          echoTimeoutMs: 5_000,
        },
        { skipPreflight: true, pacer },
      ),
    ),
  );
  runMs.push(performance.now() - t0);
  if (pacer) {
    const s = pacer.stats();
    longestWaitMs = Math.max(longestWaitMs, s.longestWaitMs);
    maxInFlight = s.maxInFlight;
    forcedByWindow += s.forcedByWindow;
  }
  for (const r of reports.flatMap((x) => x.results)) {
    sessions++;
    // A hold without pings that a hop cuts is a finding, not a loss; the emulator cuts nothing, so every session must be ok.
    if (!r.ok)
      failures.push(`${r.operation}/${r.transport}/${r.keepalive}/${r.holdSeconds}s: ${r.errorCode ?? r.upgrade.errorCode}: ${r.error ?? r.upgrade.error}`);
    if (r.upgrade.handshakeMs === null) continue;
    handshakes[r.transport]!.push(r.upgrade.handshakeMs);
    if (r.upgrade.ownCpu?.distorted) {
      distorted[r.transport]!++;
      marked.push({ round: i + 1, transport: r.transport, ms: r.upgrade.handshakeMs, busyMs: r.upgrade.ownCpu.busyMs });
    } else published[r.transport]!.push(r.upgrade.handshakeMs);
  }
}
process.stdout.write(
  JSON.stringify({
    handshakes,
    published,
    runMs,
    distorted,
    marked,
    sessions,
    failures,
    longestWaitMs,
    maxInFlight,
    forcedByWindow,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
  }),
);
process.exit(0);
