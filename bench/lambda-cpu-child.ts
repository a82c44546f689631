/**
 * Child of the Lambda CPU bench: waits until the parent has put it in its
 * cgroup (a line on stdin), then runs the Lambda's plan (hold 0, exec and
 * port-forward over both transports, kubectl keepalive) `rounds` times against
 * the emulator and prints every session's handshake time.
 */
import { runPlan } from '../src/probe/runner.js';

const [server, roundsText] = process.argv.slice(2) as [string, string];
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const handshakes: Record<string, number[]> = { websocket: [], spdy: [] };
/** Handshakes marked as distorted by our own CPU (src/probe/own-cpu.ts), per transport: not published. */
const distorted: Record<string, number> = { websocket: 0, spdy: 0 };
const runMs: number[] = [];
for (let i = 0; i < Number(roundsText); i++) {
  const t0 = performance.now();
  const report = await runPlan(
    {
      location: 'bench',
      cluster: {
        name: 'lab',
        connection: { server: new URL(server), dialTimeoutMs: 5_000, upgradeTimeoutMs: 10_000 },
        namespace: 'default',
        pod: 'probe-target',
        port: 8080,
      },
      operations: ['exec', 'portforward'],
      transports: ['websocket', 'spdy'],
      keepalives: ['kubectl'],
      holdsSeconds: [0],
      echoTimeoutMs: 5_000,
    },
    { skipPreflight: true },
  );
  runMs.push(performance.now() - t0);
  for (const r of report.results) {
    if (r.upgrade.handshakeMs === null) continue;
    handshakes[r.transport]!.push(r.upgrade.handshakeMs);
    if (r.upgrade.ownCpu?.distorted) distorted[r.transport]!++;
  }
}
process.stdout.write(JSON.stringify({ handshakes, runMs, distorted }));
process.exit(0);
