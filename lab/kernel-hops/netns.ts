/**
 * Kernel-level hops: the path through real Linux network namespaces joined by veth pairs, with the kernel's own
 * connection tracking, nftables, queueing and link MTU in the middle (faults.ts says what each fault sets). The
 * devices users cross most (NAT gateways, L4 load balancers, stateful firewalls) forget flows and drop packets in
 * the kernel's way, not a proxy's; this is that, for real.
 *
 *   client ns ──veth── r1 (the device: nftables, conntrack, tbf) ══inner veth (its MTU)══▶ r2 ──veth── this ns
 *      │                          ◀══════════════ wide veth (1500) ═════════════════╝
 *      └──────────────────────── console veth (direct: kubectl port-forward's local side) ─────────────┘
 *
 * Towards the server, packets cross the inner link (the one a fault narrows or rate-limits); back towards the
 * clients they take the wide one. So a narrow inner MTU is a one-way hole, as an upload through a VPN or tunnel meets
 * it, and the server never learns a smaller path MTU from it (which would make it advertise a smaller MSS on the next
 * connections and close the hole). The device r1 sees both directions of every flow, as a NAT or firewall does.
 * The server (the emulator) listens in this process's own namespace on `serverAddress`. Clients (real kubectl, the
 * probe's CLI) run in client namespaces (`ip netns exec`), each with its own TCP sysctls: `tcp_retries2` decides how
 * long a silently dropped connection hangs before the kernel gives up retransmitting. A client's console address is
 * reached directly from this namespace, never through the device, so a test's own connection to `kubectl
 * port-forward`'s local port is not part of the path under test.
 *
 * Names carry this process's pid (`kspl<pid36><serial>-<role>`), so a sweep can tell a dead run's namespaces from a live one's
 * (sweepDeadNamespaces, called by the test run's global teardown); every path is removed by stop(), and on exit.
 * Needs root (CAP_NET_ADMIN), iproute2 and nftables (`apt-get install nftables conntrack`).
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { HopMissingError, binaryPath } from '../real-hops/process-hop.js';

export const NETNS_PREFIX = 'kspl';

export interface ClientSpec {
  /** A short name (letters), unique in the path. */
  readonly name: string;
  /**
   * net.ipv4.tcp_retries2 in the client's namespace (Linux default 15: about 15.5 minutes of retransmission
   * before an unacknowledged connection is given up; 5: about 12.6 s, 9: about 205 s). @default 15
   */
  readonly tcpRetries2?: number;
}

export interface NetnsClient {
  readonly name: string;
  readonly ns: string;
  /** The client's address on the path (what the server sees). */
  readonly address: string;
  /** The client's address on its console link: reached from this namespace directly, not through the device. */
  readonly consoleAddress: string;
  /** `command args` run in the client's namespace. */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
}

export interface NetnsPath {
  /** Where a server in this process's namespace listens to be reached through the path. */
  readonly serverAddress: string;
  /** The device namespace (nftables, conntrack) and the inner link's far side. */
  readonly r1: string;
  readonly r2: string;
  /** The device's side of the inner link (where its queueing discipline sits). */
  readonly innerDevice: string;
  /** r2's side of the inner link. */
  readonly innerPeerDevice: string;
  readonly clients: readonly NetnsClient[];
  client(name: string): NetnsClient;
  /** Runs `command args` in a namespace of the path; throws with its stderr when it fails. */
  run(ns: string, command: string, args: readonly string[], input?: string): string;
  stop(): void;
}

let serial = 0;
const live = new Set<NetnsPath>();
let exitHook = false;

function sh(command: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(command, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`${command} ${args.join(' ')}: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** The tools a kernel path needs, each as a typed error naming its Debian package when missing. */
export function requireKernelTools(): void {
  if (!binaryPath('ip')) throw new HopMissingError('ip', 'iproute2');
  if (!binaryPath('nft')) throw new HopMissingError('nft', 'nftables');
  if (!binaryPath('tc')) throw new HopMissingError('tc', 'iproute2');
  if (process.getuid?.() !== 0) {
    const err = new HopMissingError('network namespaces', 'iproute2');
    err.message = 'kernel hops need root (CAP_NET_ADMIN: network namespaces, veth, nftables)';
    throw err;
  }
}

/** A /24 under 10.224.0.0/11 that no interface of this namespace uses, derived from the pid so parallel runs differ. */
function freeBlock(): string {
  const used = sh('ip', ['-4', '-o', 'addr', 'show']);
  const routes = sh('ip', ['-4', 'route', 'show']);
  for (let i = 0; i < 8192; i++) {
    const index = (process.pid * 13 + serial * 7 + i) % 8192;
    const block = `10.${224 + (index >> 8)}.${index & 255}`;
    if (!used.includes(`${block}.`) && !routes.includes(`${block}.`)) return block;
  }
  throw new Error('no free 10.224.0.0/11 block for a kernel path');
}

/**
 * Builds the path. Addresses inside the /24: clients' path links .{16k}/28, the inner link .128/28, r2 to this
 * namespace .144/28, consoles .{160+16k}/28 (at most 5 clients), the wide link back .240/28.
 */
export function createNetnsPath(clients: readonly ClientSpec[]): NetnsPath {
  requireKernelTools();
  if (clients.length < 1 || clients.length > 5) throw new Error('a kernel path has one to five clients');
  const id = `${NETNS_PREFIX}${process.pid.toString(36)}${(serial++ % 1296).toString(36).padStart(2, '0')}`;
  const block = freeBlock();
  const ns = (role: string) => `${id}-${role}`;
  const dev = (role: string) => `${id}${role}`; // interface names stay under IFNAMSIZ (15)
  const made: string[] = [];
  const path: NetnsPath = {
    serverAddress: `${block}.145`,
    r1: ns('r1'),
    r2: ns('r2'),
    innerDevice: dev('i1'),
    innerPeerDevice: dev('i2'),
    clients: [],
    client(name) {
      const c = this.clients.find((x) => x.name === name);
      if (!c) throw new Error(`no client ${name} in this kernel path`);
      return c;
    },
    run: (n, command, args, input) => sh('ip', ['netns', 'exec', n, command, ...args], input),
    stop() {
      live.delete(path);
      for (const n of made.splice(0).reverse()) {
        try {
          // A namespace lives on while a socket in it does: an orphaned connection whose flow was dropped retransmits
          // its FIN for minutes. Destroy every socket first (sock_destroy, CONFIG_INET_DIAG_DESTROY), then the name.
          sh('ip', ['netns', 'exec', n, 'ss', '-K', '-t', '-a']);
        } catch {
          /* nothing to destroy, or no sock_destroy in this kernel: the namespace goes when its sockets do */
        }
        try {
          sh('ip', ['netns', 'del', n]);
        } catch {
          /* already gone */
        }
      }
    },
  };
  live.add(path);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const p of [...live]) p.stop();
    });
  }
  const ip = (...args: string[]) => sh('ip', args);
  const inNs = (n: string, ...args: string[]) => sh('ip', ['-n', n, ...args]);
  try {
    for (const role of ['r1', 'r2']) {
      ip('netns', 'add', ns(role));
      made.push(ns(role));
      inNs(ns(role), 'link', 'set', 'lo', 'up');
      path.run(ns(role), 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    }
    // The inner link r1 ══ r2 (towards the server), the wide one back, and r2 ── this namespace.
    ip('link', 'add', dev('i1'), 'netns', ns('r1'), 'type', 'veth', 'peer', 'name', dev('i2'), 'netns', ns('r2'));
    inNs(ns('r1'), 'addr', 'add', `${block}.129/28`, 'dev', dev('i1'));
    inNs(ns('r2'), 'addr', 'add', `${block}.130/28`, 'dev', dev('i2'));
    ip('link', 'add', dev('w1'), 'netns', ns('r1'), 'type', 'veth', 'peer', 'name', dev('w2'), 'netns', ns('r2'));
    inNs(ns('r1'), 'addr', 'add', `${block}.241/28`, 'dev', dev('w1'));
    inNs(ns('r2'), 'addr', 'add', `${block}.242/28`, 'dev', dev('w2'));
    ip('link', 'add', dev('s0'), 'type', 'veth', 'peer', 'name', dev('s1'), 'netns', ns('r2'));
    inNs(ns('r2'), 'addr', 'add', `${block}.146/28`, 'dev', dev('s1'));
    ip('addr', 'add', `${block}.145/28`, 'dev', dev('s0'));
    for (const d of ['i1', 'w1']) inNs(ns('r1'), 'link', 'set', dev(d), 'up');
    for (const d of ['i2', 'w2', 's1']) inNs(ns('r2'), 'link', 'set', dev(d), 'up');
    ip('link', 'set', dev('s0'), 'up');
    inNs(ns('r1'), 'route', 'add', 'default', 'via', `${block}.130`);
    // Routes differ by direction: reverse-path filtering would drop what comes back on the wide link.
    for (const role of ['r1', 'r2']) path.run(ns(role), 'sysctl', ['-qw', 'net.ipv4.conf.all.rp_filter=0', 'net.ipv4.conf.default.rp_filter=0']);
    clients.forEach((spec, k) => {
      const n = ns(`c${k}`);
      ip('netns', 'add', n);
      made.push(n);
      inNs(n, 'link', 'set', 'lo', 'up');
      const net = `${block}.${16 * k}`;
      const d = (r: string) => dev(`c${k}${r}`);
      ip('link', 'add', d('a'), 'netns', n, 'type', 'veth', 'peer', 'name', d('b'), 'netns', ns('r1'));
      inNs(n, 'addr', 'add', `${block}.${16 * k + 1}/28`, 'dev', d('a'));
      inNs(ns('r1'), 'addr', 'add', `${block}.${16 * k + 2}/28`, 'dev', d('b'));
      inNs(n, 'link', 'set', d('a'), 'up');
      inNs(ns('r1'), 'link', 'set', d('b'), 'up');
      inNs(n, 'route', 'add', 'default', 'via', `${block}.${16 * k + 2}`);
      inNs(ns('r2'), 'route', 'add', `${net}/28`, 'via', `${block}.241`);
      ip('route', 'add', `${net}/28`, 'via', `${block}.146`);
      // The console: this namespace ── client, directly.
      const con = 160 + 16 * k;
      ip('link', 'add', d('x'), 'type', 'veth', 'peer', 'name', d('y'), 'netns', n);
      ip('addr', 'add', `${block}.${con + 1}/28`, 'dev', d('x'));
      inNs(n, 'addr', 'add', `${block}.${con + 2}/28`, 'dev', d('y'));
      ip('link', 'set', d('x'), 'up');
      inNs(n, 'link', 'set', d('y'), 'up');
      if (spec.tcpRetries2 !== undefined) path.run(n, 'sysctl', ['-qw', `net.ipv4.tcp_retries2=${spec.tcpRetries2}`]);
      (path.clients as NetnsClient[]).push({
        name: spec.name,
        ns: n,
        address: `${block}.${16 * k + 1}`,
        consoleAddress: `${block}.${con + 2}`,
        spawn: (command, args, options = {}) => spawn('ip', ['netns', 'exec', n, command, ...args], options),
      });
    });
  } catch (err) {
    path.stop();
    throw err;
  }
  return path;
}

/** Removes the lab's namespaces left by processes that are gone (a crashed test run): the run's last net. */
export function sweepDeadNamespaces(): string[] {
  if (!binaryPath('ip')) return [];
  const removed: string[] = [];
  let names: string[];
  try {
    names = sh('ip', ['netns', 'list'])
      .split('\n')
      .map((l) => l.split(' ')[0]!)
      .filter((n) => n.startsWith(NETNS_PREFIX));
  } catch {
    return [];
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  for (const n of names) {
    // kspl<pid base 36><serial, two base-36 digits>-role.
    const head = n.slice(NETNS_PREFIX.length).split('-')[0] ?? '';
    const pid = Number.parseInt(head.slice(0, -2), 36);
    if (Number.isFinite(pid) && pid > 0 && alive(pid)) continue;
    try {
      sh('ip', ['netns', 'del', n]);
      removed.push(n);
    } catch {
      /* raced with its owner */
    }
  }
  return removed;
}
