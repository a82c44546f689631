/**
 * The fault matrix: one probe session through each way a network can fail.
 * Each row asserts the result class, that the session ended inside its own
 * deadline, and that nothing leaked (sockets, timers) once it returned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hop } from '../../lab/hops/common.js';
import { upstreamOf } from '../../lab/hops/common.js';
import { startTcpHop } from '../../lab/hops/tcp-hop.js';
import { runSession, sessionDeadlineMs } from '../../src/probe/session.js';
import type { ClusterTarget, SessionResult, SessionSpec } from '../../src/probe/types.js';
import type { ConnectionConfig } from '../../src/net/connection.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { rawServer, spdy101, ws101, wsBinaryFrame, type RawServer } from '../helpers/raw-server.js';

const ECHO_TIMEOUT_MS = 800;
let lab: EmulatorWithKubeconfig;
let tlsLab: EmulatorWithKubeconfig;
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({});
  tlsLab = await startEmulatorWithKubeconfig({ tls: true, token: 'fault-matrix-token' });
});
afterAll(async () => {
  await lab.stop();
  await tlsLab.stop();
});

function target(connection: ConnectionConfig): ClusterTarget {
  return {
    name: 'fault',
    connection: { dialTimeoutMs: 1500, upgradeTimeoutMs: 1500, ...connection },
    namespace: 'default',
    pod: 'probe-target',
    container: 'main',
    port: 8080,
  };
}

/** Handles the test itself holds open, so they are not counted as leaks. */
function resources(): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

async function probe(spec: Partial<SessionSpec>, connection: ConnectionConfig): Promise<SessionResult> {
  const s: SessionSpec = { operation: 'exec', transport: 'websocket', keepalive: 'none', holdSeconds: 0, ...spec };
  const t = target(connection);
  const before = resources();
  const t0 = performance.now();
  const result = await runSession(s, t, { echoTimeoutMs: ECHO_TIMEOUT_MS });
  const elapsed = performance.now() - t0;
  expect(elapsed, 'the session ended inside its own deadline').toBeLessThan(sessionDeadlineMs(s.holdSeconds, t.connection, { echoTimeoutMs: ECHO_TIMEOUT_MS }));
  // Give closing sockets a moment, then nothing the session opened may remain.
  await new Promise((r) => setTimeout(r, 300));
  const after = resources();
  for (const kind of ['TCPSocketWrap', 'TLSWrap', 'Timeout']) {
    expect(after.get(kind) ?? 0, `${kind} leaked (before ${before.get(kind) ?? 0})`).toBeLessThanOrEqual(before.get(kind) ?? 0);
  }
  return result;
}

const servers: Array<RawServer | Hop> = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});
async function raw(handler: Parameters<typeof rawServer>[0]): Promise<URL> {
  const s = await rawServer(handler);
  servers.push(s);
  return s.url;
}

describe('fault matrix', () => {
  it('connection refused → DIAL_REFUSED', async () => {
    const s = await rawServer(() => undefined);
    const url = s.url;
    await s.close();
    const r = await probe({}, { server: url });
    expect(r.upgrade.errorCode).toBe('DIAL_REFUSED');
  });

  it('DNS failure → DIAL_DNS', async () => {
    const r = await probe({}, { server: new URL('https://no-such-host.invalid:6443') });
    expect(r.upgrade.errorCode).toBe('DIAL_DNS');
  });

  it('TLS certificate mismatch (wrong name) → DIAL_TLS', async () => {
    const r = await probe({}, { server: tlsLab.emulator.url, tls: { ca: [tlsLab.emulator.tls!.caPem], serverName: 'not-the-api.example' } });
    expect(r.upgrade.errorCode).toBe('DIAL_TLS');
  });

  it('TLS with an unknown CA (verification on) → DIAL_TLS', async () => {
    const r = await probe({}, { server: tlsLab.emulator.url });
    expect(r.upgrade.errorCode).toBe('DIAL_TLS');
  });

  it('a 101 that never comes → UPGRADE_TIMEOUT', async () => {
    const r = await probe({ transport: 'spdy' }, { server: await raw(() => undefined) });
    expect(r.upgrade.errorCode).toBe('UPGRADE_TIMEOUT');
  });

  it('101, then silence → the first echo fails, classified', async () => {
    const r = await probe({}, { server: await raw((s, req) => s.write(ws101(req, 'v5.channel.k8s.io'))) });
    expect(r.upgrade.ok).toBe(true);
    expect(r.firstEchoMs).toBeNull();
    expect(r.error).toMatch(/first echo failed/);
    expect(r.ok).toBe(false);
  });

  it('101 then silence over SPDY (no SYN_REPLY) → upgrade failure with a reply timeout', async () => {
    const r = await probe({ transport: 'spdy' }, { server: await raw((s) => s.write(spdy101('v4.channel.k8s.io'))) });
    expect(r.upgrade.errorCode).toBe('SPDY_REPLY_TIMEOUT');
  });

  for (const mode of ['rst', 'fin'] as const) {
    it(`${mode.toUpperCase()} in the middle of the hold → cause ${mode}, disconnect time measured`, async () => {
      const hop = await startTcpHop(`cut-${mode}`, { upstream: upstreamOf(lab.emulator.url), idleCutSeconds: 0.6, cutMode: mode });
      servers.push(hop);
      const r = await probe({ holdSeconds: 2, transport: 'spdy' }, { server: hop.url });
      expect(r.hold.cause).toBe(mode);
      expect(r.hold.disconnectSeconds).toBeGreaterThan(0.5);
      expect(r.hold.disconnectSeconds).toBeLessThan(1.2);
    });
  }

  it('GOAWAY from the server mid-hold → cause goaway', async () => {
    // Port-forward over SPDY: reply to the error and data streams with the Go vectors, echo data, then GOAWAY.
    const server = await raw((s) => {
      s.write(spdy101('portforward.k8s.io'));
      let frames = 0;
      s.on('data', (b: Buffer) => {
        // SYN_STREAM 1 (error) → reply; SYN_STREAM 3 (data) → reply; DATA on 3 → echo it back.
        for (let off = 0; off + 8 <= b.length; ) {
          const control = (b[off]! & 0x80) !== 0;
          const len = b.readUInt32BE(off + 4) & 0xffffff;
          if (control && b.readUInt16BE(off + 2) === 1) {
            frames++;
            s.write(
              frames === 1
                ? Buffer.from('80030002000000140000000178f9e3c6a7c26260606000000000ffff', 'hex')
                : Buffer.from('800300020000000c00000003026100000000ffff', 'hex'),
            );
          } else if (!control && b.readUInt32BE(off) === 3 && len > 0) {
            s.write(b.subarray(off, off + 8 + len));
            setTimeout(() => s.write(Buffer.from('800300070000000800000000' + '00000000', 'hex')), 400);
          }
          off += 8 + len;
        }
      });
    });
    const r = await probe({ operation: 'portforward', transport: 'spdy', holdSeconds: 2 }, { server });
    expect(r.firstEchoMs).not.toBeNull();
    expect(r.hold.cause).toBe('goaway');
  });

  it('the server stops answering pings (WebSocket, kubectl keepalive) → the echo after the hold times out', async () => {
    // A raw v5 server that echoes stdin but never answers pings; the 61 s pong deadline is longer than this hold.
    const server = await raw((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      s.write(wsBinaryFrame(Buffer.from([1])));
      let echoes = 0;
      s.on('data', (b: Buffer) => {
        const opcode = b[0]! & 0x0f;
        if (opcode !== 2 || echoes++ > 0) return; // answer only the first echo; ignore pings and later data
        const len = b[1]! & 0x7f;
        const mask = b.subarray(2, 6);
        const payload = Buffer.from(b.subarray(6, 6 + len).map((x, i) => x ^ mask[i % 4]!));
        s.write(wsBinaryFrame(Buffer.concat([Buffer.from([1]), payload.subarray(1)])));
      });
    });
    const r = await probe({ keepalive: 'kubectl', holdSeconds: 1 }, { server });
    expect(r.firstEchoMs).not.toBeNull();
    expect(r.hold).toMatchObject({ survived: false, disconnectSeconds: null, cause: 'echo-timeout' });
    // The first ping after a second of quiet was never answered, so neither was anything after it.
    expect(r.hold.quiet).toMatchObject({ cut: 'no-reply', answeredQuietSeconds: null, unanswered: { quietSeconds: 1 } });
  });

  it('a black hole (bytes stop, no close) → echo-timeout', async () => {
    const hop = await startTcpHop('black-hole', { upstream: upstreamOf(lab.emulator.url), blackHoleAfterSeconds: 0.5 });
    servers.push(hop);
    const r = await probe({ holdSeconds: 1, operation: 'portforward', transport: 'websocket' }, { server: hop.url });
    expect(r.hold.cause).toBe('echo-timeout');
  });

  it('5xx with an HTML body → UPGRADE_REJECTED, not a Kubernetes Status', async () => {
    const html = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const r = await probe(
      {},
      { server: await raw((s) => s.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: ${html.length}\r\n\r\n${html}`)) },
    );
    expect(r.upgrade).toMatchObject({ errorCode: 'UPGRADE_REJECTED', status: 502, kubernetesStatus: false });
  });

  it('a redirect on the upgrade → UPGRADE_REJECTED 307, not followed', async () => {
    let followed = 0;
    const other = await raw(() => void followed++);
    const r = await probe(
      { transport: 'spdy' },
      { server: await raw((s) => s.end(`HTTP/1.1 307 Temporary Redirect\r\nLocation: ${other}x\r\nContent-Length: 0\r\n\r\n`)) },
    );
    expect(r.upgrade).toMatchObject({ errorCode: 'UPGRADE_REJECTED', status: 307 });
    expect(followed).toBe(0);
  });

  it('a server that streams data forever → the session still ends at its deadline, memory bounded', async () => {
    const server = await raw((s, req) => {
      s.write(ws101(req, 'v5.channel.k8s.io'));
      const chunk = wsBinaryFrame(Buffer.concat([Buffer.from([1]), Buffer.alloc(100, 0x61)]));
      const flood = () => {
        while (s.writable && s.write(chunk)) {
          /* keep the pipe full */
        }
        if (s.writable) s.once('drain', flood);
      };
      flood();
    });
    const heapBefore = process.memoryUsage().heapUsed;
    const r = await probe({ holdSeconds: 1 }, { server });
    // The flood never contains our nonce: the first echo times out and the session is torn down.
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/first echo failed/);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});
