/**
 * How big one location may be, and the memory it gets by default (issue 26). A run starts every session of every
 * cluster (and, with per-node probing, of up to LAMBDA_MAX_NODES nodes each); the start pacer (start-pacer.ts)
 * lets them through at UTILISATION of the function's CPU share, within its window. So a memory size paces at
 * most startsPaced(memory) starts honestly; past that, starts are forced through the window's end and their
 * handshakes measure the function's CPU (marked, not published). The default memory is the smallest step that
 * paces the location's largest schedule; a location that even one vCPU cannot pace is refused (split it).
 * Measured: `npm run bench -- scale`, docs/benchmarks.md (10, 25 and 50 clusters, 16 sessions each).
 */
import { LAMBDA_MB_PER_VCPU } from '../probe/cpu-share.js';
import { expandPlan } from '../probe/plan-matrix.js';
import { START_CPU_MS, UTILISATION, WINDOW_MS } from '../probe/start-pacer.js';
import type { RunPlan } from '../vocabulary.js';
import { LAMBDA_MAX_NODES } from './lambda-limits.js';

/**
 * The memory steps a default is chosen from, MB: 512 is the smallest whose handshakes are the path's at all
 * (128 and 256 MB: docs/benchmarks.md, Lambda CPU share), 1769 one whole vCPU — the most our one event-loop
 * thread can use (more memory adds no pace).
 */
export const MEMORY_STEPS_MB = [512, 1024, LAMBDA_MB_PER_VCPU] as const;

/** Session starts `memoryMb` paces within the pacer's window. */
export function startsPaced(memoryMb: number): number {
  return Math.floor((WINDOW_MS * UTILISATION * Math.min(1, memoryMb / LAMBDA_MB_PER_VCPU)) / START_CPU_MS);
}

/** The most session starts one invocation may have (one vCPU's pace): 1000. */
export const MAX_SESSION_STARTS = startsPaced(LAMBDA_MB_PER_VCPU);

/** The default memory for a location whose largest run starts `starts` sessions, MB. */
export function defaultMemoryMb(starts: number): number {
  return MEMORY_STEPS_MB.find((mb) => startsPaced(mb) >= starts) ?? LAMBDA_MB_PER_VCPU;
}

/** The sessions one run of `plan` starts across `clusters` (per-node targets run the plan without transfers). */
export function sessionStarts(clusters: readonly { readonly target: { readonly perNode?: boolean } }[], plan: RunPlan): number {
  const main = expandPlan(plan).length;
  const perNode = expandPlan({ ...plan, transferBytes: undefined }).length * LAMBDA_MAX_NODES;
  return clusters.reduce((n, c) => n + main + (c.target.perNode ? perNode : 0), 0);
}

/** A long-hold task's size (Fargate's smallest): the task definition (infra/task-runner.ts), its cost and its pace use these. */
export const TASK_VCPUS = 0.25;
export const TASK_MEMORY_MIB = 512;

/**
 * Whether one run of a schedule can start its sessions at an honest pace: at most MAX_SESSION_STARTS in any
 * function; at most what an explicit `memoryMb` paces; a long-hold task at most what its 0.25 vCPU paces.
 */
export function sessionStartsProblem(
  starts: number,
  clusters: number,
  schedule: string,
  runner: 'lambda' | 'task',
  memoryMb: number | undefined,
): string | undefined {
  const what = `schedule "${schedule}" starts ${starts} sessions per run across ${clusters} cluster${clusters === 1 ? '' : 's'}`;
  if (runner === 'task') {
    const paced = startsPaced(TASK_VCPUS * LAMBDA_MB_PER_VCPU);
    return starts > paced
      ? `${what}; its long-hold task (${TASK_VCPUS} vCPU) paces at most ${paced} session starts within the ${WINDOW_MS / 1000} s start window (npm run bench -- scale): give the long holds fewer operations or keepalives, or split these clusters across locations`
      : undefined;
  }
  if (starts > MAX_SESSION_STARTS)
    return `${what}; one function paces at most ${MAX_SESSION_STARTS} within its ${WINDOW_MS / 1000} s start window even at a whole vCPU, and handshakes started past it would measure the function's CPU, not the path (npm run bench -- scale): split these clusters across two locations`;
  if (memoryMb !== undefined && starts > startsPaced(memoryMb))
    return `${memoryMb} MB paces at most ${startsPaced(memoryMb)} session starts within the ${WINDOW_MS / 1000} s start window, but ${what}: use at least ${defaultMemoryMb(starts)} MB or leave it unset (the default sizes it)`;
  return undefined;
}
