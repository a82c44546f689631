/**
 * npm run profile -- [spdy|websocket] [--transfers N] [--relay]: CPU profiles of a port-forward bulk transfer,
 * our client (this process, the measured transfers only, through node:inspector) and the emulator serving it
 * (`--cpu-prof`, its whole life), written to .tmp/profile/ and summarised: the functions with the most self
 * time. Open the .cpuprofile files in Chrome DevTools (Performance → Load profile) or speedscope for flame
 * graphs. `--relay`: the emulator relays to the TCP echo process instead of echoing in the stream.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Transport } from '../src/streaming/types.js';
import { TRANSPORTS } from '../src/vocabulary.js';
import { summarizeProfile, type ProfileSummary } from './cpuprofile.js';
import { median, payload } from './common.js';
import { echoProcess, emulatorProcess, oursOnce, stopProcesses } from './throughput.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { transfers: { type: 'string', default: '8' }, relay: { type: 'boolean', default: false } },
});
const transport = (positionals[0] ?? 'websocket') as Transport;
if (!TRANSPORTS.includes(transport)) throw new Error(`transport "${transport}" is not one of ${TRANSPORTS.join(', ')}`);
const transfers = Number(values.transfers);
if (!Number.isInteger(transfers) || transfers < 1) throw new Error(`--transfers "${values.transfers}" is not a whole number ≥ 1`);
const WARM_UP = 3;
const dir = resolve('.tmp/profile');
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'emulator'), { recursive: true });

const echo = await echoProcess();
const lab = await emulatorProcess(echo.port, { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', join(dir, 'emulator')], relay: values.relay });
const data = payload(64 * 1024 * 1024);
const session = new Session();
session.connect();
const rates: number[] = [];
try {
  for (let i = 0; i < WARM_UP + transfers; i++) {
    if (i === WARM_UP) {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const { mibs } = await oursOnce(transport, lab.url, data);
    if (i >= WARM_UP) rates.push(mibs);
  }
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(join(dir, `client-${transport}.cpuprofile`), JSON.stringify(profile));
} finally {
  session.disconnect();
  await stopProcesses(lab.child, echo.child);
}

const show = (label: string, path: string, s: ProfileSummary) => {
  console.log(`\n${label}: ${path}\n  ${s.totalMs.toFixed(0)} ms profiled, busy ${s.busyPercent.toFixed(0)} %; most self time (% of all samples):`);
  for (const [fn, pct] of s.top) console.log(`  ${pct.toFixed(1).padStart(5)} %  ${fn}`);
};
console.log(
  `ours over ${transport}, ${transfers} transfers of 64 MiB after ${WARM_UP} warm-ups: median ${median(rates).toFixed(0)} MiB/s (${rates.map((r) => r.toFixed(0)).join(', ')})`,
);
const client = join(dir, `client-${transport}.cpuprofile`);
show('our client (the measured transfers)', client, summarizeProfile(client));
const emulatorFile = readdirSync(join(dir, 'emulator'))
  .map((f) => join(dir, 'emulator', f))
  .map((f) => ({ f, s: summarizeProfile(f) }))
  .sort((a, b) => b.s.totalMs - a.s.totalMs)[0];
if (emulatorFile)
  show(`the emulator${values.relay ? ' (relaying to the echo process)' : ''} (its whole life, startup included)`, emulatorFile.f, emulatorFile.s);
console.log('\nFlame graphs: load the .cpuprofile files in Chrome DevTools (Performance → Load profile) or https://www.speedscope.app.');
