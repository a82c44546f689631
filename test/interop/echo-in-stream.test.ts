/**
 * The throughput benchmark's server: the emulator with its pod's port echoing inside the stream
 * (`echoInStream`, `emulator --echo-in-stream`). Real kubectl 1.33 and our client move 1 MiB byte-exact
 * over both transports (and ours over the legacy v4 port-forward) with no TCP connection to the echo server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPortForward } from '../../src/streaming/index.js';
import { openLegacyPortForward } from '../../src/streaming/portforward-legacy.js';
import type { Transport } from '../../src/streaming/types.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { pattern, tcpEcho, withKubectlPortForward } from '../../lab/kubectl.js';
import { echoThrough } from '../helpers/echo-through.js';

const target = { namespace: 'default', pod: 'probe-target' };

describe('the benchmark server: pod ports echo in the stream', () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ echoInStream: true });
  });
  afterAll(() => lab.stop());
  const data = pattern(1024 * 1024);

  for (const transport of ['spdy', 'websocket'] as Transport[]) {
    it(`our client over ${transport}: 1 MiB byte-exact, and the FIN comes back`, async () => {
      const pf = await openPortForward(transport, { server: lab.emulator.url }, target);
      const conn = await pf.openConnection(8080);
      const out: Buffer[] = [];
      conn.stream.on('data', (c: Buffer) => out.push(c));
      conn.stream.end(data);
      await new Promise((r) => conn.stream.once('end', r)); // our FIN echoed as the server's FIN
      expect(Buffer.concat(out).equals(data)).toBe(true);
      expect(await conn.errorText).toBe('');
      pf.close();
    });

    it(`kubectl 1.33 over ${transport}: 1 MiB byte-exact`, async () => {
      const env = { KUBECTL_PORT_FORWARD_WEBSOCKETS: transport === 'websocket' ? 'true' : 'false' };
      const { value } = await withKubectlPortForward('1.33', ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], env, (port) =>
        tcpEcho(port, data),
      );
      expect(value.equals(data)).toBe(true);
      expect(lab.emulator.upgrades.at(-1)!.transport).toBe(transport);
    });
  }

  it('our client over the legacy v4 WebSocket port-forward: 1 MiB byte-exact', async () => {
    const pf = await openLegacyPortForward({ server: lab.emulator.url }, { ...target, ports: [8080] });
    expect((await echoThrough(pf, 8080, data)).equals(data)).toBe(true);
    pf.close();
  });

  it('no connection ever reached the echo server (no TCP hop to the pod)', () => {
    expect(lab.emulator.echoConnections).toBe(0);
  });
});
