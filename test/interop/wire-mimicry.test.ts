/**
 * Our client must look like kubectl on the wire, so every hop treats the
 * probe as it treats kubectl. The emulator records kubectl 1.33's upgrade
 * requests and ours; they must agree on method, path, query, the upgrade
 * headers (values and order) and the SPDY streams opened (order and headers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpgradeRecord } from '../../lab/emulator/options.js';
import { openExec, openPortForward } from '../../src/streaming/index.js';
import { runKubectl, tcpEcho, withKubectlPortForward } from '../../lab/kubectl.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';

function wireView(u: UpgradeRecord) {
  const h = u.headers;
  return {
    method: u.method,
    path: u.path,
    query: u.query,
    connection: String(h.connection ?? '').toLowerCase(),
    upgrade: String(h.upgrade ?? '').toLowerCase(),
    secWebSocketProtocol: h['sec-websocket-protocol'],
    secWebSocketVersion: h['sec-websocket-version'],
    xStreamProtocolVersion: u.offered.join(' | '),
    contentLength: h['content-length'],
    streams: u.streams,
    subprotocol: u.subprotocol,
  };
}

describe('our upgrade requests match kubectl 1.33 on the wire', () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig();
  });
  afterAll(() => lab.stop());

  const target = { namespace: 'default', pod: 'probe-target', container: 'main' };

  for (const wire of ['websocket', 'spdy'] as const) {
    it(`exec -i -- cat over ${wire}`, async () => {
      const env = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: wire === 'websocket' ? 'true' : 'false' };
      let from = lab.emulator.upgrades.length;
      const r = await runKubectl('1.33', ['--kubeconfig', lab.kubeconfig, 'exec', '-i', 'probe-target', '--', 'cat'], { env, stdin: 'x\n' });
      expect(r.code).toBe(0);
      const [theirs] = lab.since(from);
      from = lab.emulator.upgrades.length;
      const s = await openExec(wire, { server: lab.emulator.url }, { ...target, command: ['cat'], stdin: true });
      s.stdin!.end('x\n');
      s.stdout!.resume();
      await s.exit;
      s.close();
      const [ours] = lab.since(from);
      expect(wireView(ours!)).toEqual(wireView(theirs!));
    });

    it(`port-forward over ${wire}`, async () => {
      const env = { KUBECTL_PORT_FORWARD_WEBSOCKETS: wire === 'websocket' ? 'true' : 'false' };
      let from = lab.emulator.upgrades.length;
      await withKubectlPortForward('1.33', ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], env, (port) => tcpEcho(port, Buffer.from('x')));
      const [theirs] = lab.since(from);
      from = lab.emulator.upgrades.length;
      const pf = await openPortForward(wire, { server: lab.emulator.url }, target);
      const conn = await pf.openConnection(8080);
      conn.stream.write('x');
      await new Promise((r) => conn.stream.once('data', r));
      conn.close();
      pf.close();
      await pf.ended;
      const [ours] = lab.since(from);
      expect(wireView(ours!)).toEqual(wireView(theirs!));
    });
  }
});
