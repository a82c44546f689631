/**
 * Port-forward throughput, 64 MiB byte-exact through the emulator's echo
 * port: our client vs real kubectl 1.33 port-forward, over SPDY and over the
 * WebSocket tunnel, and both against a direct TCP connection to the echo
 * server (the physical limit here).
 */
import net from 'node:net';
import { openPortForward } from '../src/streaming/index.js';
import type { Transport } from '../src/streaming/types.js';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { withKubectlPortForward } from '../lab/kubectl.js';
import { echoThroughput, median, payload, type Row } from './common.js';

const MIB = 64;
const RUNS = 3;

function tcp(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

export async function throughputBench(): Promise<Row[]> {
  const lab = await startEmulatorWithKubeconfig({});
  const { data, sha } = payload(MIB * 1024 * 1024);
  const rows: Row[] = [];
  try {
    const echoPort = (lab.emulator as unknown as { echo: { port: number } }).echo.port;
    const direct: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const s = await tcp(echoPort);
      direct.push(await echoThroughput(s, data, sha, 'direct TCP'));
      s.destroy();
    }
    const directMiBs = median(direct);
    rows.push({ bench: 'port-forward throughput', what: `direct TCP to the echo server (${MIB} MiB)`, value: directMiBs, unit: 'MiB/s' });
    for (const transport of ['spdy', 'websocket'] as Transport[]) {
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const pf = await openPortForward(transport, { server: lab.emulator.url }, { namespace: 'default', pod: 'probe-target', keepalive: 'none' });
        const conn = await pf.openConnection(8080);
        ours.push(await echoThroughput(conn.stream, data, sha, `ours ${transport}`));
        conn.close();
        pf.close();
        const env = { KUBECTL_PORT_FORWARD_WEBSOCKETS: transport === 'websocket' ? 'true' : 'false' };
        const { value } = await withKubectlPortForward('1.33', ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], env, async (port) => {
          const s = await tcp(port);
          const v = await echoThroughput(s, data, sha, `kubectl ${transport}`);
          s.destroy();
          return v;
        });
        theirs.push(value);
      }
      const o = median(ours);
      const k = median(theirs);
      rows.push({ bench: 'port-forward throughput', what: `kubectl 1.33 over ${transport}`, value: k, unit: 'MiB/s', ratio: `${(k / directMiBs).toFixed(2)} of direct` });
      rows.push({ bench: 'port-forward throughput', what: `ours over ${transport}`, value: o, unit: 'MiB/s', ratio: `${(o / k).toFixed(2)}× kubectl`, target: '≥ 1.00× kubectl', pass: o >= k });
    }
  } finally {
    await lab.stop();
  }
  return rows;
}
