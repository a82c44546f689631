import { startEmulatorWithKubeconfig } from './lab/emulator/kubeconfig.js';
import { cli } from './test/helpers/cli.js';
const lab = await startEmulatorWithKubeconfig({ tls: true, token: 'nodes-token-123456', serverVersion: 'v1.36.0', nodes: [
  { name: 'node-a', declaredFeatures: ['ExtendWebSocketsToKubelet'] },
  { name: 'node-b', kubeletVersion: 'v1.36.0', declaredFeatures: ['ExtendWebSocketsToKubelet'], fault: { kind: 'stream-error' } },
  { name: 'node-c', fault: { kind: 'refuse' } },
  { name: 'node-d', kubeletVersion: 'v1.35.2', fault: { kind: 'cut', afterSeconds: 3 } },
] });
const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--per-node', '--hold', '0s,5s']);
console.log(r.code, r.stdout, r.stderr);
await lab.stop();
