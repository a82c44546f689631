/**
 * A hostile API server (issue 57), the cases checked in-process: a failed label lookup said in the report, and the
 * exact PEER_NOT_READING errors at the session's level. The attacks run against the CLI in its own process, with its
 * memory, time and every output checked, are in hostile-cli.test.ts.
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

describe('a label lookup that fails (issue 57 §7): said, never silent', () => {
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
});

describe('a peer that pings and stops reading (issue 57 §2): our replies are bounded, the session cut with PEER_NOT_READING', () => {
  const target = { namespace: 'default', pod: 'p', container: 'main', command: ['cat'], stdin: true, keepalive: 'none' as const };
  /** A raw server that answers the SPDY upgrade and floods `frames` of `frame`; the exec's open must fail, typed. */
  const openFailsAgainst = async (frame: (i: number) => Buffer, frames: number) => {
    const { rawServer, spdy101 } = await import('../helpers/raw-server.js');
    const { flood } = await import('../helpers/hostile-api.js');
    const raw = await rawServer((socket) => {
      socket.write(spdy101('v4.channel.k8s.io'));
      flood(socket, frame, frames);
    });
    try {
      const { openExec } = await import('../../src/streaming/index.js');
      // The cut comes while the exec's streams are being set up (no SYN_REPLY ever comes): the open itself fails, typed.
      return await openExec('spdy', { server: raw.url, upgradeTimeoutMs: 3000 }, { ...target }).then(
        () => expect.fail('the session opened'),
        (e: unknown) => e as { code?: string; message?: string },
      );
    } finally {
      await raw.close();
    }
  };

  it('SPDY: PINGs, never reading the echoes: the exec cannot open, PEER_NOT_READING', async () => {
    // Server PINGs, 12 bytes each; 8 M of them at most (96 MiB), far more than loopback buffers hold.
    const { serverPing } = await import('../helpers/hostile-api.js');
    const err = await openFailsAgainst(serverPing, 8_000_000);
    expect(err.code).toBe('PEER_NOT_READING');
    expect(err.message).toMatch(/^the peer kept sending pings and stopped reading: 1,04\d,\d{3} bytes of our replies were waiting unsent/);
  }, 60_000);

  it('SPDY: streams of its own, never reading our refusals: the exec cannot open, PEER_NOT_READING', async () => {
    const { HeaderBlockEncoder } = await import('../../src/streaming/spdy/header-block.js');
    const { serializeFrame } = await import('../../src/streaming/spdy/serializer.js');
    const encoder = new HeaderBlockEncoder();
    // Server streams (even ids), each refused with a 16-byte RST_STREAM: 600,000 at most (~27 MiB).
    const syn = (i: number) =>
      serializeFrame(
        { type: 'SYN_STREAM', streamId: 2 * (i + 1), associatedId: 0, priority: 0, slot: 0, flags: 0, headers: { streamtype: ['pushed'] } },
        encoder,
      );
    const err = await openFailsAgainst(syn, 600_000);
    expect(err.code).toBe('PEER_NOT_READING');
    expect(err.message).toMatch(/^the peer kept sending streams of its own \(each refused\) and stopped reading: 1,04\d,\d{3} bytes of our replies/);
  }, 60_000);

  it('WebSocket: pings, never reading the pongs: the session ends protocol-error, PEER_NOT_READING', async () => {
    const { rawServer, ws101 } = await import('../helpers/raw-server.js');
    const { flood } = await import('../helpers/hostile-api.js');
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
