/**
 * Our streaming client against the emulator (which real kubectl accepts, see
 * test/interop): exec and port-forward over every wire protocol, byte-exact
 * bulk transfer past SPDY's 64 KiB window, exit codes, and the end causes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExec, openPortForward } from '../../src/streaming/index.js';
import { openLegacyPortForward } from '../../src/streaming/portforward-legacy.js';
import type { ExecSession, Transport } from '../../src/streaming/types.js';
import type { ConnectionConfig } from '../../src/net/connection.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { pattern } from '../../lab/kubectl.js';
import { echoThrough } from '../helpers/echo-through.js';

const target = { namespace: 'default', pod: 'probe-target', container: 'main' };

function collect(stream: NodeJS.ReadableStream | undefined): Promise<Buffer> {
  if (!stream) return Promise.resolve(Buffer.alloc(0));
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => stream.once('end', () => resolve(Buffer.concat(chunks))));
}

for (const tls of [false, true]) {
  describe(`our client against the emulator (${tls ? 'TLS + bearer token' : 'plain HTTP'})`, () => {
    let lab: EmulatorWithKubeconfig;
    let config: ConnectionConfig;
    beforeAll(async () => {
      lab = await startEmulatorWithKubeconfig(tls ? { tls: true, token: 'client-test-token' } : {});
      config = {
        server: lab.emulator.url,
        tls: tls ? { ca: [lab.emulator.tls!.caPem] } : undefined,
        headers: tls ? { Authorization: 'Bearer client-test-token' } : undefined,
      };
    });
    afterAll(() => lab.stop());

    for (const transport of ['websocket', 'spdy'] as Transport[]) {
      it(`exec cat echoes stdin over ${transport}, then exits 0`, async () => {
        const s: ExecSession = await openExec(transport, config, { ...target, command: ['cat'], stdin: true });
        expect(s.subprotocol).toBe(transport === 'websocket' ? 'v5.channel.k8s.io' : 'v4.channel.k8s.io');
        expect(s.timing.handshakeMs).toBeGreaterThan(0);
        expect(s.timing.phases.tcpMs).toBeGreaterThanOrEqual(0);
        if (tls) expect(s.timing.phases.tlsMs).toBeGreaterThan(0);
        const out = collect(s.stdout);
        const data = pattern(300 * 1024);
        s.stdin!.write(data);
        s.stdin!.end();
        expect((await out).equals(data)).toBe(true);
        expect(await s.exit).toMatchObject({ exitCode: 0 });
        s.close();
        expect((await s.ended).cause).toMatch(/^(local|ws-close:1000|goaway|fin)$/);
      });

      it(`exec exit codes and stderr over ${transport}`, async () => {
        const s = await openExec(transport, config, { ...target, command: ['sh', '-c', 'nosuchcmd; exit 42'] });
        const err = collect(s.stderr);
        expect(await s.exit).toMatchObject({ exitCode: 42, status: { reason: 'NonZeroExitCode' } });
        expect((await err).toString()).toBe('sh: nosuchcmd: not found\n');
        s.close();
      });

      it(`port-forward moves 1 MiB byte-exact over ${transport} (no stall at 64 KiB)`, async () => {
        const pf = await openPortForward(transport, config, target);
        expect(pf.subprotocol).toBe(transport === 'websocket' ? 'SPDY/3.1+portforward.k8s.io' : 'portforward.k8s.io');
        const data = pattern(1024 * 1024);
        expect((await echoThrough(pf, 8080, data)).equals(data)).toBe(true);
        // A second connection on the same session gets the next request id.
        expect((await echoThrough(pf, 8080, Buffer.from('again'))).toString()).toBe('again');
        const up = lab.emulator.upgrades.at(-1)!;
        expect(up.streams.map((h) => `${h.streamtype}:${h.requestid}`)).toEqual(['error:0', 'data:0', 'error:1', 'data:1']);
        pf.close();
        await pf.ended;
      });

      it(`port-forward to a port the pod does not have reports the server's error over ${transport}`, async () => {
        const pf = await openPortForward(transport, config, target);
        const conn = await pf.openConnection(9999);
        expect(await conn.errorText).toContain('error forwarding port 9999');
        pf.close();
      });
    }

    it('exec over WebSocket v4 when only v4 is offered (no half-close; status still decoded)', async () => {
      const s = await openExec('websocket', config, { ...target, command: ['sh', '-c', 'echo v4; exit 3'], websocketProtocols: ['v4.channel.k8s.io'] });
      expect(s.subprotocol).toBe('v4.channel.k8s.io');
      const out = collect(s.stdout);
      expect(await s.exit).toMatchObject({ exitCode: 3 });
      expect((await out).toString()).toBe('v4\n');
    });

    it('exec over WebSocket v4.base64 (text messages)', async () => {
      const s = await openExec('websocket', config, { ...target, command: ['echo', 'b64'], websocketProtocols: ['v4.base64.channel.k8s.io'] });
      expect(s.subprotocol).toBe('v4.base64.channel.k8s.io');
      const out = collect(s.stdout);
      expect(await s.exit).toMatchObject({ exitCode: 0 });
      expect((await out).toString()).toBe('b64\n');
    });

    it('legacy v4.channel.k8s.io WebSocket port-forward moves 1 MiB byte-exact', async () => {
      const pf = await openLegacyPortForward(config, { ...target, ports: [8080] });
      expect(pf.subprotocol).toBe('v4.channel.k8s.io');
      const data = pattern(1024 * 1024);
      expect((await echoThrough(pf, 8080, data)).equals(data)).toBe(true);
      expect(lab.emulator.upgrades.at(-1)!.query).toBe('ports=8080');
      pf.close();
    });
  });
}
