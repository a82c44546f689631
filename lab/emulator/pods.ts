/** The emulated cluster's nodes and pods: the probe's target, and with nodes configured one per-node target on each. */
import { NODE_TARGET_LABEL, TARGET_LABEL } from '../../src/kube/target.js';
import type { EmulatorNode } from './options.js';
import type { EmulatorPod } from './rest.js';

/** The target pod's UID: the kubelet names it in a refused port-forward's error text. */
export const POD_UID = '6b1c6a52-6c4f-4e0e-9d55-6d2f6b2c0001';

/** The one node of an emulator without configured nodes. */
const LAB_NODES: readonly EmulatorNode[] = [{ name: 'lab-node' }];

/** The configured nodes, or one healthy lab-node. */
export function emulatorNodes(configured: readonly EmulatorNode[] | undefined): readonly EmulatorNode[] {
  return configured?.length ? configured : LAB_NODES;
}

/** The target pod on the first node, then (with nodes configured) `probe-node-<node>` on each, labelled as the engine selects them. */
export function emulatorPods(podName: string, configured: readonly EmulatorNode[] | undefined): readonly EmulatorPod[] {
  const nodes = emulatorNodes(configured);
  const target: EmulatorPod = {
    name: podName,
    node: nodes[0]!.name,
    labels: { [TARGET_LABEL.key]: TARGET_LABEL.value, 'apps.kubernetes.io/pod-index': '0' },
    uid: POD_UID,
    ip: '10.0.0.10',
  };
  if (!configured?.length) return [target];
  return [
    target,
    ...nodes.map((n, i) => ({
      name: `probe-node-${n.name}`,
      node: n.name,
      labels: { [NODE_TARGET_LABEL.key]: NODE_TARGET_LABEL.value },
      uid: `6b1c6a52-6c4f-4e0e-9d55-6d2f6b2c${String(i + 2).padStart(4, '0')}`,
      ip: `10.0.${i + 1}.10`,
    })),
  ];
}
