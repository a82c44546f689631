/**
 * Port-forward throughput, 64 MiB byte-exact through the emulator's pod port: our client vs real kubectl 1.33
 * port-forward, over SPDY and over the WebSocket tunnel, and both against a direct TCP connection to an echo
 * server (the physical limit here). The server is the emulator in a process of its own with the pod's port
 * echoing inside the stream (`--echo-in-stream`): the same for both clients, cheaper than either, and one TCP
 * connection from the client as in the direct baseline, so the ratios measure the clients and the streaming
 * protocol, not a relay hop to a pod. CPU seconds per GiB are measured for our process and for kubectl's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { PROBE_PROCESS_ENV } from '../src/config/process-env.js';
import { openPortForward } from '../src/streaming/index.js';
import type { Transport } from '../src/streaming/types.js';
import { emulatorTls } from '../lab/emulator/tls.js';
import { goCipherOrder } from '../src/net/tls-ciphers.js';
import { withKubectlPortForward } from '../lab/kubectl.js';
import { BenchFailure, echoThroughput, median, payload, type Row } from './common.js';

/**
 * The environment of the bench's server processes (the emulator and the echo server): the function's own
 * (PROBE_PROCESS_ENV, src/config/process-env.ts). Without it, glibc's heap trimming set the pace of the server, not
 * the client under test, and that pace swung 2–3× from one process to the next; a kubelet is a Go program and pays
 * none of it. bench/run.ts runs the client (the bench's own process) with the same environment.
 */
const SERVER_PROCESS_ENV: NodeJS.ProcessEnv = { ...process.env, ...PROBE_PROCESS_ENV };

/** A TCP echo server in a process of its own: the direct-TCP baseline. */
export function echoProcess(): Promise<{ port: number; child: ChildProcess }> {
  return serverProcess(
    "const s=require('net').createServer(c=>{c.setNoDelay(true);c.on('error',()=>{});c.pipe(c)});s.listen(0,'127.0.0.1',()=>console.log('port '+s.address().port))",
    {},
  );
}

/**
 * A TLS echo server in a process of its own, with a certificate of the lab's CA for 127.0.0.1 (lab/emulator/tls.ts,
 * the emulator's kind): what the bytes and their encryption cost a client that must speak TLS, as ours and kubectl
 * do to an API server (not a strict floor: its pacing sets how much each of our reads carries).
 */
export async function tlsEchoProcess(): Promise<{ port: number; child: ChildProcess; caPem: string }> {
  const tlsMaterial = emulatorTls();
  const script =
    "const e=process.env;const s=require('tls').createServer({cert:e.KSP_ECHO_CERT,key:e.KSP_ECHO_KEY,ciphers:e.KSP_ECHO_CIPHERS,honorCipherOrder:true},c=>{c.setNoDelay(true);c.on('error',()=>{});c.pipe(c)});s.listen(0,'127.0.0.1',()=>console.log('port '+s.address().port))";
  // It picks the cipher suite as the emulator does (an API server's choice: lab/emulator/server.ts).
  const server = await serverProcess(script, { KSP_ECHO_CERT: tlsMaterial.certPem, KSP_ECHO_KEY: tlsMaterial.keyPem, KSP_ECHO_CIPHERS: goCipherOrder() });
  return { ...server, caPem: tlsMaterial.caPem };
}

async function serverProcess(script: string, env: NodeJS.ProcessEnv): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...SERVER_PROCESS_ENV, ...env } });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(/port (\d+)/.exec(d.toString())?.[1])));
    child.once('exit', () => reject(new BenchFailure('the echo process exited')));
  });
  return { port, child };
}

/**
 * The emulator as a separate process (`kube-stream-probe emulator` with `args`), with its URL, kubeconfig and echo
 * port: a bench's server then shares nothing (heap, garbage collector, event loop) with the bench's own process.
 */
export async function emulatorProcess(
  echoPort: number | undefined,
  options: { readonly nodeArgs?: readonly string[]; readonly relay?: boolean; readonly args?: readonly string[] } = {},
): Promise<{ url: URL; kubeconfig: string; echoPort: number; child: ChildProcess }> {
  // The pod's port echoes inside the emulator (--echo-in-stream): one TCP connection from the client, as in the
  // direct baseline, so "× direct" is what the streaming protocol costs on both ends, not a relay hop to a pod.
  // `relay` forwards to the echo process instead (the setup before 2026-12-03, for profiling the relay).
  const args = [
    '--import',
    'tsx',
    ...(options.nodeArgs ?? []),
    'src/cli/main.ts',
    'emulator',
    // Without an echo port the emulator runs its own TCP echo, and the pod's port is forwarded to it.
    ...(echoPort === undefined ? [] : ['--echo-port', String(echoPort), ...(options.relay ? [] : ['--echo-in-stream'])]),
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: SERVER_PROCESS_ENV });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const t0 = Date.now();
  while (!/echo .*at 127\.0\.0\.1:\d+/.test(out)) {
    if (Date.now() - t0 > 20_000 || child.exitCode !== null) throw new BenchFailure(`the emulator process did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: new URL(/emulated API server: (\S+)/.exec(out)![1]!),
    kubeconfig: /kubeconfig: (\S+)/.exec(out)![1]!,
    echoPort: Number(/echo .*at 127\.0\.0\.1:(\d+)/.exec(out)![1]),
    child,
  };
}

/** CPU seconds a process has used (utime + stime from /proc, clock ticks of 100 Hz). */
function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const GIB = 1024;
/** Issue 42: our process's CPU per GiB at most half kubectl's process's, on every row. */
export const CPU_RATIO = 0.5;
export const CPU_TARGET = `≤ ${CPU_RATIO}× kubectl's process`;

const MIB = 64;
const RUNS = 7;
const WARM_UP = 3;

export function tcp(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

/** A TLS connection to the TLS echo (tlsEchoProcess), verified against its CA. */
export function tlsTo(port: number, caPem: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca: caPem }, () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

/**
 * One byte-exact echo of `data` from this process over a direct connection (no tunnel, no protocol), written in
 * `chunk`-byte writes: MiB/s and this process's CPU seconds, what the bytes alone cost a Node client.
 */
export async function directOnce(
  connect: () => Promise<net.Socket>,
  data: Buffer,
  label: string,
  chunk?: number,
): Promise<{ mibs: number; cpuSeconds: number }> {
  const s = await connect();
  try {
    const c0 = process.cpuUsage();
    const mibs = await echoThroughput(s, data, label, chunk);
    const c = process.cpuUsage(c0);
    return { mibs, cpuSeconds: (c.user + c.system) / 1e6 };
  } finally {
    s.destroy();
  }
}

/** One transfer of `data` through our port-forward to the emulator's pod port: MiB/s and our process's CPU seconds. */
export async function oursOnce(transport: Transport, server: URL, data: Buffer): Promise<{ mibs: number; cpuSeconds: number }> {
  const pf = await openPortForward(transport, { server }, { namespace: 'default', pod: 'probe-target', keepalive: 'none' });
  try {
    const conn = await pf.openConnection(8080);
    const c0 = process.cpuUsage();
    const mibs = await echoThroughput(conn.stream, data, `ours ${transport}`);
    const c = process.cpuUsage(c0);
    conn.close();
    return { mibs, cpuSeconds: (c.user + c.system) / 1e6 };
  } finally {
    pf.close();
  }
}

export async function throughputBench(): Promise<Row[]> {
  const echo = await echoProcess();
  const tlsEcho = await tlsEchoProcess();
  const lab = await emulatorProcess(echo.port);
  const data = payload(MIB * 1024 * 1024);
  const rows: Row[] = [];
  try {
    const echoPort = lab.echoPort;
    // Direct TCP, and direct TLS (what ours and kubectl's tunnels also pay), are measured interleaved with the SPDY
    // runs (one of each per round), so that a change in the shared machine's load moves both sides of a ratio alike.
    const direct: number[] = [];
    const directCpu: number[] = [];
    const directTlsCpu: number[] = [];
    const directRun = async (count: boolean) => {
      const plain = await directOnce(() => tcp(echoPort), data, 'direct TCP');
      const overTls = await directOnce(() => tlsTo(tlsEcho.port, tlsEcho.caPem), data, 'direct TLS');
      if (count) {
        direct.push(plain.mibs);
        directCpu.push(plain.cpuSeconds);
        directTlsCpu.push(overTls.cpuSeconds);
      }
    };
    let directMiBs = 0;
    // Per GiB moved through the tunnel (64 MiB each way counts once: what was echoed).
    const perGiB = (cpu: number[]) => (median(cpu) * GIB) / MIB;
    for (const transport of ['spdy', 'websocket'] as Transport[]) {
      const ours: number[] = [];
      const theirs: number[] = [];
      const ourCpu: number[] = [];
      const theirCpu: number[] = [];
      /** This process, feeding and checking kubectl's tunnel through its local port, while kubectl ran. */
      const theirClientCpu: number[] = [];
      const ratios: number[] = [];
      // The first WARM_UP runs of each client are not counted: they pay the JIT of the emulator's path for that
      // client and of our client (a fresh process's first transfers run at half speed, and ours reaches its
      // steady state after three: 135, 149, 218, 223, 303 MiB/s in one profile), which a compiled kubectl never
      // pays. What is compared is the steady state, interleaved run by run.
      // Each round runs both clients back to back, in alternating order, and the target is judged on the median of
      // the rounds' own ratios: the shared machine's load drifts over seconds (direct TCP read 200-615 MiB/s within
      // an hour on 2026-12-05), and a round's two transfers see the same load where two medians need not.
      for (let i = 0; i < WARM_UP + RUNS; i++) {
        const count = i >= WARM_UP;
        if (transport === 'spdy') await directRun(count);
        const runOurs = async () => {
          const mine = await oursOnce(transport, lab.url, data);
          if (count) {
            ours.push(mine.mibs);
            ourCpu.push(mine.cpuSeconds);
          }
        };
        const runTheirs = async () => {
          const env = { KUBECTL_PORT_FORWARD_WEBSOCKETS: transport === 'websocket' ? 'true' : 'false' };
          const { value } = await withKubectlPortForward('1.33', ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], env, async (port, pid) => {
            const s = await tcp(port);
            const k0 = processCpuSeconds(pid);
            const c0 = process.cpuUsage();
            const v = await echoThroughput(s, data, `kubectl ${transport}`);
            const c = process.cpuUsage(c0);
            if (count) {
              theirCpu.push(processCpuSeconds(pid) - k0);
              theirClientCpu.push((c.user + c.system) / 1e6);
            }
            s.destroy();
            return v;
          });
          if (count) theirs.push(value);
        };
        if (i % 2 === 0) {
          await runOurs();
          await runTheirs();
        } else {
          await runTheirs();
          await runOurs();
        }
        if (count) ratios.push(ours.at(-1)! / theirs.at(-1)!);
      }
      const o = median(ours);
      const k = median(theirs);
      if (transport === 'spdy') {
        directMiBs = median(direct);
        rows.push(
          {
            bench: 'port-forward throughput',
            what: `direct TCP to the echo server (${MIB} MiB), interleaved with the SPDY runs`,
            value: directMiBs,
            unit: 'MiB/s',
          },
          {
            bench: 'port-forward CPU',
            what: 'direct TCP: this process feeding and checking the echo, no tunnel (what the bytes alone cost a Node client)',
            value: perGiB(directCpu),
            unit: 'CPU s/GiB',
          },
          {
            bench: 'port-forward CPU',
            what: 'direct TLS: this process feeding and checking a TLS echo, no tunnel (the bytes and their encryption, as both clients pay)',
            value: perGiB(directTlsCpu),
            unit: 'CPU s/GiB',
          },
        );
      }
      rows.push({
        bench: 'port-forward throughput',
        what: `kubectl 1.33 over ${transport}`,
        value: k,
        unit: 'MiB/s',
        ratio: `${(k / directMiBs).toFixed(2)} of direct`,
      });
      const r = median(ratios);
      // Issue 42: a throughput against kubectl through our own emulator says as much about the machine as about
      // the probe (1.6× on one machine, 3× on another), so it is reported, and what is held is the share of direct
      // TCP (our client must not be what limits a reading) and our own CPU per GiB.
      rows.push({
        bench: 'port-forward throughput',
        what: `ours over ${transport} (against kubectl: median of ${RUNS} paired rounds ${r.toFixed(2)}×: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
        value: o,
        unit: 'MiB/s',
        ratio: `${(o / directMiBs).toFixed(2)} of direct, ${r.toFixed(2)}× kubectl`,
        target: '≥ 0.50 of direct',
        pass: o >= 0.5 * directMiBs,
      });
      const theirs1 = perGiB(theirCpu);
      const ours1 = perGiB(ourCpu);
      const client = perGiB(theirClientCpu);
      rows.push(
        {
          bench: 'port-forward CPU',
          what: `kubectl 1.33 over ${transport}: its process`,
          value: theirs1,
          unit: 'CPU s/GiB',
        },
        {
          bench: 'port-forward CPU',
          what: `kubectl 1.33 over ${transport}: its process and this one feeding and checking it through its local port`,
          value: theirs1 + client,
          unit: 'CPU s/GiB',
        },
        {
          bench: 'port-forward CPU',
          what: `ours over ${transport}: our process, feeding and checking included`,
          value: ours1,
          unit: 'CPU s/GiB',
          ratio: `${(ours1 / theirs1).toFixed(2)}× kubectl's process, ${(ours1 / (theirs1 + client)).toFixed(2)}× with its client, ${(ours1 / perGiB(directTlsCpu)).toFixed(2)}× direct TLS`,
          target: CPU_TARGET,
          pass: ours1 <= CPU_RATIO * theirs1,
        },
      );
    }
  } finally {
    await stopProcesses(lab.child, echo.child, tlsEcho.child);
  }
  return rows;
}

/** Stops the bench's own child processes (SIGTERM; an emulator started with --cpu-prof writes its profile on exit). */
export async function stopProcesses(...children: ChildProcess[]): Promise<void> {
  for (const c of children) {
    c.kill('SIGTERM');
    await new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)));
  }
}
