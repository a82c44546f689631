/**
 * How much CPU this process may use, in vCPUs, for the start pacer (start-pacer.ts): the smallest of
 * - Lambda's share for the function's memory: AWS_LAMBDA_FUNCTION_MEMORY_SIZE / 1769 (the Lambda developer guide,
 *   "Configuring Lambda function memory", docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html: "At
 *   1,769 MB, a function has the equivalent of one vCPU (one vCPU-second of credits per second)"; CPU power is
 *   allocated in proportion to memory below it — credits, so a function sees two cores but is throttled to its
 *   share, which is what the benchmark's CFS quota models);
 * - a cgroup CPU quota on this process (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`: a container's
 *   `--cpus`, an ECS task's `cpu`, a Kubernetes pod's CPU limit, the lambda-cpu benchmark's child);
 * - the CPUs the OS gives this process (os.availableParallelism()).
 * Unreadable cgroup files count as "no quota": the share is never made up.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Lambda: one vCPU at 1769 MB. */
export const LAMBDA_MB_PER_VCPU = 1769;

export interface CpuShare {
  /** vCPUs this process may use (may be below 1). */
  readonly vcpus: number;
  /** Where the figure came from, for the report and the logs. */
  readonly source: 'lambda-memory' | 'cgroup-v2' | 'cgroup-v1' | 'cpus';
}

/** The Lambda share for a memory size, vCPUs. */
export function lambdaVcpus(memoryMb: number): number {
  return memoryMb / LAMBDA_MB_PER_VCPU;
}

type Read = (path: string) => string | undefined;
const readText: Read = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** The quota of a cgroup directory and its ancestors (the tightest wins), vCPUs; undefined for none. */
function quotaAlong(dirs: readonly string[], quotaOf: (dir: string) => number | undefined): number | undefined {
  const quotas = dirs.map(quotaOf).filter((q): q is number => q !== undefined);
  return quotas.length ? Math.min(...quotas) : undefined;
}

function ancestors(root: string, path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.map((_, i) => `${root}/${parts.slice(0, i + 1).join('/')}`).concat(root);
}

/** From /proc/self/cgroup and the cgroup files, vCPUs; undefined when no quota applies. */
export function cgroupVcpus(read: Read = readText): { vcpus: number; version: 1 | 2 } | undefined {
  const table = read('/proc/self/cgroup');
  if (!table) return undefined;
  for (const line of table.split('\n')) {
    const [, controllers, path] = line.split(':', 3) as [string, string | undefined, string | undefined];
    if (path === undefined || controllers === undefined) continue;
    if (controllers === '' && line.startsWith('0::')) {
      // v2: "max 100000" is no quota; "50000 100000" is half a CPU.
      const v = quotaAlong(ancestors('/sys/fs/cgroup', path), (dir) => {
        const [quota, period] = (read(`${dir}/cpu.max`) ?? '').trim().split(/\s+/);
        const q = Number(quota);
        const p = Number(period);
        return quota !== 'max' && q > 0 && p > 0 ? q / p : undefined;
      });
      if (v !== undefined) return { vcpus: v, version: 2 };
    } else if (controllers.split(',').includes('cpu')) {
      const mount = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/cpuacct,cpu'].find((m) => read(`${m}/cpu.cfs_period_us`));
      if (!mount) continue;
      const v = quotaAlong(ancestors(mount, path), (dir) => {
        const q = Number(read(`${dir}/cpu.cfs_quota_us`));
        const p = Number(read(`${dir}/cpu.cfs_period_us`));
        return q > 0 && p > 0 ? q / p : undefined;
      });
      if (v !== undefined) return { vcpus: v, version: 1 };
    }
  }
  return undefined;
}

/** This process's CPU share. */
export function cpuShare(env: NodeJS.ProcessEnv = process.env, read: Read = readText, cpus: number = availableParallelism()): CpuShare {
  const found: CpuShare[] = [{ vcpus: cpus, source: 'cpus' }];
  const memory = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  if (Number.isFinite(memory) && memory > 0) found.push({ vcpus: lambdaVcpus(memory), source: 'lambda-memory' });
  const cg = cgroupVcpus(read);
  if (cg) found.push({ vcpus: cg.vcpus, source: cg.version === 2 ? 'cgroup-v2' : 'cgroup-v1' });
  return found.reduce((a, b) => (b.vcpus < a.vcpus ? b : a));
}
