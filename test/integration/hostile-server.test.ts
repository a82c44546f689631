/**
 * A hostile API server (issue 57): plausible in its REST phase, then attacking one way at a time. Each attack is bounded
 * in bytes and time and stops by itself; the probe must end classified, within its plan's budget.
 */
import http from 'node:http';
import type net from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { writePlainKubeconfig } from '../helpers/plain-kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'ksp-hostile-'));
const servers: Array<{ server: http.Server; sockets: Set<net.Socket>; timers: Set<NodeJS.Timeout> }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const t of s.timers) clearInterval(t);
    for (const k of s.sockets) k.destroy();
    await new Promise((r) => s.server.close(r));
  }
});

const POD = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: 'p', namespace: 'default', annotations: { 'kubectl.kubernetes.io/default-container': 'main' } },
  spec: { nodeName: 'n', containers: [{ name: 'main' }] },
  status: { phase: 'Running' },
};

/** A server answering the REST phase as `rest` says and refusing every upgrade with a 403 Status. */
async function hostile(rest: (req: http.IncomingMessage, res: http.ServerResponse, timers: Set<NodeJS.Timeout>) => void): Promise<string> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => rest(req, res, timers));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', (_req, socket) => {
    const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'no', reason: 'Forbidden', code: 403 });
    socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({ server, sockets, timers });
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return writePlainKubeconfig(join(dir, `kc-${servers.length}`), url);
}

/** The REST phase of a plausible API server: the target pod, a version, every access review allowed. */
function plausibleRest(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  const url = req.url ?? '';
  res.end(
    JSON.stringify(
      url.startsWith('/api/v1/namespaces/default/pods/p') ? POD : url.startsWith('/version') ? { gitVersion: 'v1.33.1' } : { status: { allowed: true } },
    ),
  );
}

/** A plausible API server whose WebSocket exec upgrades (v5) are handed to `attack` after the 101. */
async function hostileWebSocket(attack: (ws: import('ws').WebSocket) => void): Promise<{ kc: string; close: () => void }> {
  const { WebSocketServer } = await import('ws');
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
  const kc = await hostile(plausibleRest);
  const { server } = servers.at(-1)!;
  server.removeAllListeners('upgrade');
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, attack));
  return { kc, close: () => wss.close() };
}

/** Writes `json` one byte every `everyMs`, for at most `maxBytes` bytes (then stops, never ending the body). */
function trickle(res: http.ServerResponse, timers: Set<NodeJS.Timeout>, everyMs: number, maxBytes = 10_000): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  let sent = 0;
  const t = setInterval(() => {
    if (sent++ >= maxBytes || res.destroyed) return clearInterval(t);
    res.write(' ');
  }, everyMs);
  timers.add(t);
}

describe('a REST reply that never completes (issue 57 §4): every request has a total deadline', () => {
  it('/version trickled a byte every 500 ms: the run ends, the version unread with REST_DEADLINE, the sessions classified', async () => {
    const kc = await hostile((req, res, timers) => {
      if (req.url?.startsWith('/version')) return trickle(res, timers, 500);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(req.url?.startsWith('/api/v1/namespaces/default/pods/p') ? POD : { kind: 'Status', status: { allowed: true } }));
    });
    const t0 = performance.now();
    const r = await cli(['run', '--kubeconfig', kc, '--pod', 'p', '--hold', '0s', '--keepalive', 'kubectl', '--ops', 'exec', '-o', 'json']);
    const seconds = (performance.now() - t0) / 1000;
    const report = JSON.parse(r.stdout);
    // The /version deadline is 5 s; before, the run never ended (the quiet between bytes never reached the idle timeout).
    expect(seconds).toBeLessThan(30);
    expect(report.server.versionError).toMatch(/^GET \/version\?timeout=32s: not answered in full within 5000 ms$/);
    expect(report.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['not-measured']);
  }, 60_000);

  it('the pod GET trickled: the lookup gives up at its deadline and the sessions still run and say what they met', async () => {
    const kc = await hostile((req, res, timers) => {
      if (req.url?.startsWith('/api/v1/namespaces/default/pods/p')) return trickle(res, timers, 500);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(req.url?.startsWith('/version') ? { gitVersion: 'v1.33.1' } : { kind: 'Status', status: { allowed: true } }));
    });
    const t0 = performance.now();
    const r = await cli(['run', '--kubeconfig', kc, '--pod', 'p', '--hold', '0s', '--keepalive', 'kubectl', '--ops', 'exec', '-o', 'json']);
    expect((performance.now() - t0) / 1000).toBeLessThan(40);
    const report = JSON.parse(r.stdout);
    expect(report.results.length).toBeGreaterThan(0);
    expect(report.results.every((x: { upgrade: { status: number } }) => x.upgrade.status === 403)).toBe(true);
  }, 60_000);
});

describe('a pod list the probe cannot or should not print whole (issue 57 §7)', () => {
  const list = (n: number, phase: string) =>
    JSON.stringify({ kind: 'PodList', apiVersion: 'v1', items: Array.from({ length: n }, (_, i) => ({ metadata: { name: `p${i}` }, status: { phase } })) });
  const serving = (body: string) =>
    hostile((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(req.url?.includes('labelSelector') ? body : JSON.stringify({ gitVersion: 'v1.33.1' }));
    });

  it('over 16 MiB: not measured (exit 3) with target-unlisted, never a silent fallback to a default pod', async () => {
    const kc = await serving(list(300_000, 'Running'));
    const r = await cli(['run', '--kubeconfig', kc, '--hold', '0s', '--keepalive', 'kubectl', '--ops', 'exec', '-o', 'json']);
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout);
    expect(report.target.pod).toBeNull();
    expect(report.results).toEqual([]);
    expect(report.verdicts[0].diagnosis[0]).toMatchObject({
      code: 'target-unlisted',
      summary: expect.stringContaining('more than 16 MiB'),
      check: expect.stringContaining('--pod'),
    });
  }, 60_000);

  it('a lookup that fails on the path: the manifest’s pod is probed by name, and the report says why', async () => {
    const kc = await hostile((req, res) => {
      if (req.url?.includes('labelSelector')) {
        res.writeHead(502, { 'Content-Type': 'text/html' });
        return void res.end('<html>Bad Gateway</html>');
      }
      plausibleRest(req, res);
    });
    const args = ['run', '--kubeconfig', kc, '--hold', '0s', '--keepalive', 'kubectl', '--ops', 'exec'];
    const report = JSON.parse((await cli([...args, '-o', 'json'])).stdout);
    expect(report.target).toMatchObject({ pod: 'probe-target-0', lookupError: expect.stringMatching(/answered 502 without a Kubernetes Status$/) });
    expect((await cli(args)).stdout).toMatch(
      /^target: the label lookup failed \(GET .* answered 502 without a Kubernetes Status\); probed the manifest's pod probe-target-0 by name$/m,
    );
  }, 60_000);

  it('250,000 Pending pods: the target-missing line counts them and names the first ten, not all', async () => {
    const kc = await serving(list(250_000, 'Pending'));
    const r = await cli(['run', '--kubeconfig', kc, '--hold', '0s', '--keepalive', 'kubectl', '--ops', 'exec', '-o', 'json']);
    expect(r.code).toBe(3);
    const summary: string = JSON.parse(r.stdout).verdicts[0].diagnosis[0].summary;
    expect(summary).toContain('(250,000 found, 250,000 Pending; the first 10: p0 Pending, p1 Pending,');
    expect(summary.length).toBeLessThan(400);
  }, 60_000);
});

describe('a huge error text after the 101 (issue 57 §3): bounded in every medium, every report written', () => {
  it('a 50 MB Failure status on exec’s error channel: the session fails classified, JSON, HTML and the table stay small', async () => {
    const huge = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'InternalError',
      code: 500,
      message: 'x'.repeat(50 * 1024 * 1024),
    });
    const { kc, close } = await hostileWebSocket((ws) => {
      // The lowest writable channel first (kubelet websocket.go), then the status in 1 MiB messages (each under the
      // probe's message bound: the stream's total is what must be bounded), then close.
      ws.send(Buffer.from([1]));
      const body = Buffer.from(huge);
      for (let i = 0; i < body.length; i += 1024 * 1024) ws.send(Buffer.concat([Buffer.from([3]), body.subarray(i, i + 1024 * 1024)]));
      ws.send(Buffer.from([3]), () => ws.close(1000));
    });
    try {
      const args = ['run', '--kubeconfig', kc, '--pod', 'p', '--hold', '0s', '--keepalive', 'kubectl', '--ops', 'exec', '--transports', 'websocket'];
      const json = await cli([...args, '-o', 'json']);
      expect(json.code).not.toBe(2);
      expect(json.stdout.length).toBeLessThan(512 * 1024);
      const report = JSON.parse(json.stdout);
      expect(report.results[0].ok).toBe(false);
      expect(JSON.stringify(report)).toMatch(/more than the 65,536 bytes a status may take/);
      const html = await cli([...args, '-o', 'html']);
      expect(html.code).not.toBe(2);
      expect(html.stdout).toMatch(/^<!doctype html>/i);
      expect(html.stdout.length).toBeLessThan(1024 * 1024);
      const table = await cli(args);
      expect(table.code).not.toBe(2);
      expect(table.stdout.length).toBeLessThan(256 * 1024);
    } finally {
      close();
    }
  }, 120_000);
});

describe('streams the probe never asked to read (issue 57 §1): read and counted, or refused, never kept', () => {
  it('exec’s stderr flooded with 256 MiB during a hold: the session works, the bytes are counted, memory stays flat', async () => {
    const flood = Buffer.concat([Buffer.from([2]), Buffer.alloc(1024 * 1024, 0x65)]);
    const { kc, close } = await hostileWebSocket((ws) => {
      ws.send(Buffer.from([1]));
      let sent = 0;
      // 256 MiB of stderr, each message sent once the last left (bounded, and done in a few seconds).
      const more = () => {
        if (sent++ < 256 && ws.readyState === ws.OPEN) ws.send(flood, more);
      };
      more();
      ws.on('message', (m: Buffer) => {
        if (m[0] === 0) ws.send(Buffer.concat([Buffer.from([1]), m.subarray(1)])); // stdin back on stdout: the echo
        if (m[0] === 255) ws.send(Buffer.from([3, ...Buffer.from('{"kind":"Status","status":"Success"}')]), () => ws.close(1000));
      });
    });
    let peak = 0;
    const base = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - base)), 50);
    try {
      const r = await cli([
        'run',
        '--kubeconfig',
        kc,
        '--pod',
        'p',
        '--hold',
        '3s',
        '--keepalive',
        'kubectl',
        '--ops',
        'exec',
        '--transports',
        'websocket',
        '-o',
        'json',
      ]);
      // Generous (the in-process CLI, the server and the sampler share this process): kept whole it is 256 MiB and more.
      expect(peak).toBeLessThan(200 * 1024 * 1024);
      const report = JSON.parse(r.stdout);
      const held = report.results.find((x: { holdSeconds: number }) => x.holdSeconds === 3);
      expect(held.ok, held.error).toBe(true);
      expect(held.stderrBytes).toBeGreaterThanOrEqual(200 * 1024 * 1024);
    } finally {
      clearInterval(sampler);
      close();
    }
  }, 120_000);
});

describe('a peer that pings and stops reading (issue 57 §2): our replies are bounded, the session cut with PEER_NOT_READING', () => {
  const target = { namespace: 'default', pod: 'p', container: 'main', command: ['cat'], stdin: true, keepalive: 'none' as const };
  /** Sends `frames` pings (bounded), never reading what comes back. */
  const flood = (socket: import('node:net').Socket, ping: (i: number) => Buffer, frames: number) => {
    socket.pause(); // never read: our replies pile up in the kernel's buffers, then in the probe's
    const batch = 4096;
    let i = 0;
    const more = () => {
      while (i < frames && !socket.destroyed) {
        const chunk = Buffer.concat(Array.from({ length: Math.min(batch, frames - i) }, (_, k) => ping(i + k)));
        i += batch;
        if (!socket.write(chunk)) return void socket.once('drain', more);
      }
    };
    more();
  };

  it('SPDY: PINGs, never reading the echoes: the exec cannot open, PEER_NOT_READING', async () => {
    const { rawServer, spdy101 } = await import('../helpers/raw-server.js');
    const raw = await rawServer((socket) => {
      socket.write(spdy101('v4.channel.k8s.io'));
      // Server PINGs: even ids, 12 bytes each; 8 M of them at most (96 MiB), far more than loopback buffers hold.
      const ping = (i: number) => {
        const b = Buffer.from([0x80, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0]);
        b.writeUInt32BE(((2 * (i + 1)) & 0x7fffffff) >>> 0, 8);
        return b;
      };
      flood(socket, ping, 8_000_000);
    });
    try {
      const { openExec } = await import('../../src/streaming/index.js');
      // The cut comes while the exec's streams are being set up (no SYN_REPLY ever comes): the open itself fails, typed.
      const err = await openExec('spdy', { server: raw.url, upgradeTimeoutMs: 3000 }, { ...target }).then(
        () => expect.fail('the session opened'),
        (e: unknown) => e as { code?: string; message?: string },
      );
      expect(err.code).toBe('PEER_NOT_READING');
      expect(err.message).toMatch(/^the peer kept sending pings and stopped reading: 1,04\d,\d{3} bytes of our replies were waiting unsent/);
    } finally {
      await raw.close();
    }
  }, 60_000);

  it('WebSocket: pings, never reading the pongs: the session ends protocol-error, PEER_NOT_READING', async () => {
    const { rawServer, ws101 } = await import('../helpers/raw-server.js');
    const raw = await rawServer((socket, req) => {
      socket.write(ws101(req, 'v5.channel.k8s.io'));
      socket.write(Buffer.from([0x82, 0x01, 0x01])); // the empty stdout message first
      // Unmasked server pings with 125-byte payloads: 700,000 of them at most (~89 MiB).
      const ping = () => Buffer.concat([Buffer.from([0x89, 125]), Buffer.alloc(125, 0x70)]);
      flood(socket, ping, 700_000);
    });
    try {
      const { openExec } = await import('../../src/streaming/index.js');
      const s = await openExec('websocket', { server: raw.url, upgradeTimeoutMs: 3000 }, { ...target });
      const end = await s.ended;
      expect(end.cause).toBe('protocol-error');
      expect((end as { error?: { code?: string } }).error?.code).toBe('PEER_NOT_READING');
    } finally {
      await raw.close();
    }
  }, 60_000);
});
