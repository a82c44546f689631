/**
 * Starts real hop software from Debian's packages on loopback: a free port,
 * its own temp dir and config file, readiness checked by connecting, stopped
 * by pid (only the processes we started). A missing binary is a typed error
 * naming the Debian package, so tests can say what to install.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class HopMissingError extends Error {
  constructor(
    readonly binary: string,
    readonly debianPackage: string,
  ) {
    super(`${binary} is not installed: apt-get install ${debianPackage}`);
    this.name = 'HopMissingError';
  }
}

export interface RealHop {
  readonly name: string;
  readonly port: number;
  /** Extra ports the config asked for (e.g. a second listener). */
  readonly ports: readonly number[];
  readonly pid: number;
  readonly dir: string;
  /** Everything the hop wrote (its own logs, in full). */
  log(): string;
  stop(): Promise<void>;
}

export interface RealHopSpec {
  readonly name: string;
  readonly binary: string;
  readonly debianPackage: string;
  /** How many loopback ports to reserve; the first is `port`. */
  readonly portCount?: number;
  /** Files to write into the hop's dir. */
  files(dir: string, ports: readonly number[]): Record<string, string>;
  args(dir: string, ports: readonly number[]): string[];
  /** Which reserved port proves readiness (default the first). */
  readonly readyPort?: number;
  readonly env?: Readonly<Record<string, string>>;
}

export function binaryPath(binary: string): string | undefined {
  for (const d of ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/bin', '/usr/local/sbin']) {
    const p = join(d, binary);
    if (existsSync(p)) return p;
  }
  return undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export async function startRealHop(spec: RealHopSpec): Promise<RealHop> {
  const bin = binaryPath(spec.binary);
  if (!bin) throw new HopMissingError(spec.binary, spec.debianPackage);
  const dir = mkdtempSync(join(tmpdir(), `ksp-hop-${spec.name}-`));
  // Daemons that drop privileges (squid → proxy, nginx → www-data) must still write their logs here.
  chmodSync(dir, 0o777);
  const ports: number[] = [];
  for (let i = 0; i < (spec.portCount ?? 1); i++) ports.push(await freePort());
  for (const [file, text] of Object.entries(spec.files(dir, ports))) writeFileSync(join(dir, file), text);
  const logPath = join(dir, 'stdio.log');
  const out = openSync(logPath, 'a');
  const child: ChildProcess = spawn(bin, spec.args(dir, ports), { cwd: dir, stdio: ['ignore', out, out], env: { ...process.env, ...spec.env } });
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const log = () => {
    const parts: string[] = [];
    for (const f of ['stdio.log', 'error.log', 'cache.log', 'danted.log', 'haproxy.log', 'tinyproxy.log', 'access.log']) {
      try {
        parts.push(readFileSync(join(dir, f), 'utf8'));
      } catch {
        /* not written */
      }
    }
    return parts.join('\n');
  };
  const readyPort = ports[spec.readyPort ?? 0]!;
  const t0 = performance.now();
  while (!(await canConnect(readyPort))) {
    if (exited !== undefined || performance.now() - t0 > 15_000) {
      child.kill('SIGKILL');
      throw new Error(
        `${spec.name} (${bin}) did not start listening on 127.0.0.1:${readyPort}${exited !== undefined ? ` (exited ${exited})` : ''}:\n${log().slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name: spec.name,
    port: ports[0]!,
    ports,
    pid: child.pid!,
    dir,
    log,
    stop: async () => {
      if (exited === undefined) {
        child.kill('SIGTERM');
        const gone = await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(() => r('timeout'), 3000))]);
        if (gone === 'timeout') child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
