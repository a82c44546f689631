/**
 * kubectl's keepalives on the wire: WebSocket pings every 5 s with a pong
 * deadline (61 s in kubectl; shortened here by the same code path), SPDY
 * PINGs every 5 s, none at all in "none" mode.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openExec } from '../../src/streaming/index.js';
import { upgradeWebSocket } from '../../src/streaming/upgrade.js';
import { WS_PING_PERIOD_MS, WS_PONG_DEADLINE_MS } from '../../src/streaming/keepalive.js';
import { WebSocketConnection } from '../../src/streaming/ws-connection.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { rawServer, ws101, type RawServer } from '../helpers/raw-server.js';

let raw: RawServer | undefined;
let lab: EmulatorWithKubeconfig | undefined;
afterEach(async () => {
  await raw?.close();
  await lab?.stop();
  raw = undefined;
  lab = undefined;
});

describe('keepalive', () => {
  it("uses kubectl's timers: ping every 5 s, pong deadline 61 s", () => {
    expect(WS_PING_PERIOD_MS).toBe(5_000);
    expect(WS_PONG_DEADLINE_MS).toBe(61_000);
  });

  it('a server that never answers pings ends the session with no-pong at the deadline', async () => {
    const pings: number[] = [];
    raw = await rawServer((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      // Count client ping frames (opcode 9, masked) and never answer them.
      s.on('data', (b: Buffer) => {
        if ((b[0]! & 0x0f) === 0x9) pings.push(performance.now());
      });
    });
    const up = await upgradeWebSocket({ server: raw.url }, { path: '/x', what: 'test', headers: [], protocols: ['v5.channel.k8s.io'] });
    const conn = new WebSocketConnection(up.ws, up.raw, { pingPeriodMs: 100, pongDeadlineMs: 450 });
    up.ws.start();
    const t0 = performance.now();
    const end = await conn.ended;
    expect(end.cause).toBe('no-pong');
    expect(end.atMs - t0).toBeGreaterThan(400);
    expect(end.atMs - t0).toBeLessThan(1000);
    expect(pings.length).toBeGreaterThanOrEqual(3);
  });

  it('kubectl mode pings every 5 s (WebSocket and SPDY exec, SPDY port-forward) and every 10 s in the tunnel; none never pings', async () => {
    lab = await startEmulatorWithKubeconfig({});
    const { openPortForward } = await import('../../src/streaming/index.js');
    const target = { namespace: 'default', pod: 'probe-target', container: 'main' };
    const cases = [
      [
        'exec websocket',
        (k: 'kubectl' | 'none') => openExec('websocket', { server: lab!.emulator.url }, { ...target, command: ['cat'], stdin: true, keepalive: k }),
      ],
      ['exec spdy', (k: 'kubectl' | 'none') => openExec('spdy', { server: lab!.emulator.url }, { ...target, command: ['cat'], stdin: true, keepalive: k })],
      ['portforward spdy', (k: 'kubectl' | 'none') => openPortForward('spdy', { server: lab!.emulator.url }, { ...target, keepalive: k })],
      ['portforward tunnel', (k: 'kubectl' | 'none') => openPortForward('websocket', { server: lab!.emulator.url }, { ...target, keepalive: k })],
    ] as const;
    const opened: Array<{ name: string; keepalive: string; seq: number; close(): void }> = [];
    for (const [name, open] of cases) {
      for (const keepalive of ['kubectl', 'none'] as const) {
        const s = await open(keepalive);
        opened.push({ name, keepalive, seq: lab.emulator.upgrades.at(-1)!.seq, close: () => s.close() });
      }
    }
    await new Promise((r) => setTimeout(r, 10_700));
    const counts = Object.fromEntries(opened.map((o) => [`${o.name} ${o.keepalive}`, lab!.emulator.upgrades.find((u) => u.seq === o.seq)!.pingsReceived]));
    opened.forEach((o) => o.close());
    expect(counts).toEqual({
      'exec websocket kubectl': 2,
      'exec websocket none': 0,
      'exec spdy kubectl': 2,
      'exec spdy none': 0,
      'portforward spdy kubectl': 2,
      'portforward spdy none': 0,
      'portforward tunnel kubectl': 1,
      'portforward tunnel none': 0,
    });
  }, 30_000);
});
