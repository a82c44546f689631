/**
 * What the device (r1 in netns.ts) does, set the way the real devices behave, each with named nftables counters so a
 * test can check the kernel really did it:
 *
 * - `forget`: a stateful device that forgets a flow idle for `idleSeconds` (connection tracking's established
 *   timeout, `nf_conntrack_tcp_timeout_established`) and does not pick a mid-stream packet up again
 *   (`nf_conntrack_tcp_loose=0`), so the next packet of a forgotten flow is `ct state invalid`; then either dropped
 *   silently (`drop`: Azure Load Balancer and NAT Gateway by default, GCP firewall connection tracking and Cloud NAT,
 *   EC2 security-group tracking) or answered with a TCP reset (`reset`: AWS NAT Gateway and NLB). Counter
 *   `forgotten`: packets of forgotten flows.
 * - `mtu-black-hole`: the inner link (towards the server) is narrower (`innerMtu`) than the endpoints' links (1500),
 *   and the device drops its own ICMP "fragmentation needed" (type 3 code 4), as a firewall that blocks all ICMP does:
 *   full-size segments from the client vanish, small ones pass; replies come back on the wide link, untouched (a
 *   one-way hole, as uploads through a VPN or tunnel meet it). Counter `frag_needed`. `clampMss` applies the fix
 *   (the device rewrites the MSS option of every SYN to what the inner link carries), and the hole closes.
 * - `lossy`: random loss (`numgen random`, counter `lost`) and a rate limit (the `tbf` queueing discipline on the
 *   inner link; this kernel has no `netem`).
 */
import type { NetnsPath } from './netns.js';

export type KernelFault =
  | { readonly kind: 'forget'; readonly idleSeconds: number; readonly atExpiry: 'drop' | 'reset' }
  | { readonly kind: 'mtu-black-hole'; readonly innerMtu: number; readonly clampMss?: boolean }
  | { readonly kind: 'lossy'; readonly lossPercent: number; readonly rateKbit: number };

const TABLE = 'ksp';

/** The device's ruleset for a fault. */
function ruleset(fault: KernelFault): string {
  switch (fault.kind) {
    case 'forget':
      return `table inet ${TABLE} {
  counter forgotten { }
  chain forward {
    type filter hook forward priority filter; policy accept;
    ct state invalid meta l4proto tcp counter name "forgotten" ${fault.atExpiry === 'reset' ? 'reject with tcp reset' : 'drop'}
  }
}`;
    case 'mtu-black-hole':
      return `table inet ${TABLE} {
  counter frag_needed { }
  chain output {
    type filter hook output priority filter; policy accept;
    icmp type destination-unreachable icmp code frag-needed counter name "frag_needed" drop
  }
  chain forward {
    type filter hook forward priority filter; policy accept;${fault.clampMss ? `\n    tcp flags syn tcp option maxseg size set ${fault.innerMtu - 40}` : ''}
  }
}`;
    case 'lossy':
      return `table inet ${TABLE} {
  counter lost { }
  chain forward {
    type filter hook forward priority filter; policy accept;
    numgen random mod 1000 < ${Math.round(fault.lossPercent * 10)} counter name "lost" drop
  }
}`;
  }
}

/** Sets the fault on the path's device (r1), replacing any earlier one. */
export function applyFault(path: NetnsPath, fault: KernelFault): void {
  path.run(path.r1, 'nft', ['flush', 'ruleset']);
  try {
    path.run(path.r1, 'tc', ['qdisc', 'del', 'dev', path.innerDevice, 'root']);
  } catch {
    /* none set */
  }
  if (fault.kind === 'forget') {
    path.run(path.r1, 'sysctl', ['-qw', 'net.netfilter.nf_conntrack_tcp_loose=0', `net.netfilter.nf_conntrack_tcp_timeout_established=${fault.idleSeconds}`]);
  }
  const mtu = String(fault.kind === 'mtu-black-hole' ? fault.innerMtu : 1500);
  path.run(path.r1, 'ip', ['link', 'set', 'dev', path.innerDevice, 'mtu', mtu]);
  path.run(path.r2, 'ip', ['link', 'set', 'dev', path.innerPeerDevice, 'mtu', mtu]);
  if (fault.kind === 'lossy') {
    // burst must hold at least one timer tick's worth at the rate; 32 kbit is plenty below 100 Mbit/s.
    path.run(path.r1, 'tc', ['qdisc', 'add', 'dev', path.innerDevice, 'root', 'tbf', 'rate', `${fault.rateKbit}kbit`, 'burst', '32kbit', 'latency', '200ms']);
  }
  path.run(path.r1, 'nft', ['-f', '-'], ruleset(fault));
}

/** The device's named counters: packets each rule matched. */
export function faultCounters(path: NetnsPath): Record<string, number> {
  const json = JSON.parse(path.run(path.r1, 'nft', ['-j', 'list', 'counters'])) as {
    nftables: Array<{ counter?: { name: string; packets: number } }>;
  };
  const out: Record<string, number> = {};
  for (const e of json.nftables) if (e.counter) out[e.counter.name] = e.counter.packets;
  return out;
}

/** Packets the rate limit dropped or held back on the inner link (tc's own statistics). */
export function qdiscStats(path: NetnsPath): { readonly sentPackets: number; readonly droppedPackets: number; readonly overlimits: number } {
  const text = path.run(path.r1, 'tc', ['-s', 'qdisc', 'show', 'dev', path.innerDevice]);
  const m = /Sent \d+ bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)/.exec(text);
  return { sentPackets: Number(m?.[1] ?? 0), droppedPackets: Number(m?.[2] ?? 0), overlimits: Number(m?.[3] ?? 0) };
}
