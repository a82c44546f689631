/**
 * Child process for the memory bench: opens N idle sessions and reports memory after GC, against a baseline taken
 * either right after the warm-up (`warm`) or once the process has sat idle for SETTLE_IDLE_MS (`settled`): V8's
 * memory reducer gives back the young generation the warm-up grew after some seconds of little allocation (V8
 * src/heap/memory-reducer.cc: kLongDelayMs 8 s, then up to three collections 0.5 s apart; seen here at 7-9 s).
 * From a warm baseline, setting 100 SPDY sessions up grew V8's young generation by another 3.8 MiB; from a
 * settled one, by 0.3 MiB (2026-12-06) — the nursery is V8's, per process and bounded by --max-semi-space-size,
 * not something a session keeps.
 */
import { openExec } from '../src/streaming/index.js';
import type { ExecSession, Transport } from '../src/streaming/types.js';

const [server, transport, countText, baseline] = process.argv.slice(2) as [string, Transport, string, 'warm' | 'settled'];
const count = Number(countText);
const gc = (globalThis as { gc?: () => void }).gc!;
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
};
// Warm-up: the first sessions compile code and fill pools once per process; that is not per-session cost.
const warm = await Promise.all(
  Array.from({ length: 10 }, () =>
    openExec(
      transport,
      { server: new URL(server) },
      { namespace: 'default', pod: 'probe-target', container: 'main', command: ['cat'], stdin: true, keepalive: 'none' },
    ),
  ),
);
for (const s of warm) s.destroy();
await new Promise((r) => setTimeout(r, 300));
await settle();
/** Past V8's memory reducer (8 s, then three collections 0.5 s apart), with margin: 20 s is what was measured to work. */
const SETTLE_IDLE_MS = 20_000;
if (baseline === 'settled') await new Promise((r) => setTimeout(r, SETTLE_IDLE_MS));
const { getHeapSpaceStatistics } = await import('node:v8');
/**
 * V8's young generation, resident bytes (pages touched): what of it RSS carries. Its reserved size can double
 * without RSS following, so the size is not what to report (2026-12-04: "grew 8 MiB" beside 38 KiB RSS a session).
 */
const newSpace = () => getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.physical_space_size ?? 0;
const newBefore = newSpace();
const before = process.memoryUsage();
const sessions: ExecSession[] = [];
// Batches of 10, as before: RSS is a high-water mark of what setting sessions up allocates.
for (let i = 0; i < count; i += 10) {
  const batch = await Promise.all(
    Array.from({ length: Math.min(10, count - i) }, () =>
      openExec(
        transport,
        { server: new URL(server) },
        { namespace: 'default', pod: 'probe-target', container: 'main', command: ['cat'], stdin: true, keepalive: 'none' },
      ),
    ),
  );
  sessions.push(...batch);
}
await settle();
const after = process.memoryUsage();
const alive = sessions.filter((s) => s.stdin && !s.stdin.destroyed).length;
process.stdout.write(
  JSON.stringify({
    count,
    alive,
    newSpace: newSpace() - newBefore,
    rss: after.rss - before.rss,
    heap: after.heapUsed - before.heapUsed,
    external: after.external - before.external,
  }),
);
for (const s of sessions) s.destroy();
process.exit(0);
