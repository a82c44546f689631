/**
 * The environment our probe's processes run with: the Lambda function, the long-hold task, and the benchmarks that
 * measure them (one source of truth for infra/ and bench/).
 *
 * `MALLOC_TRIM_THRESHOLD_` (glibc's M_TRIM_THRESHOLD, read from the environment at process start; mallopt(3), the
 * glibc manual's "Malloc Tunable Parameters"): keep up to 32 MiB of freed heap rather than return it to the kernel
 * whenever 128 KiB lie free at the heap's top. Node allocates a fresh 64 KiB buffer from malloc for every socket
 * read and frees it when the garbage collector drops it; at hundreds of MiB/s the default trimming shrinks and regrows
 * the heap hundreds of times per 64 MiB moved (strace of the emulator: 2,075 brk calls in eight 64 MiB transfers),
 * each regrowth paying its page faults again. That is our own CPU, read as the path's throughput, and it swung a
 * process's port-forward throughput 2–3× from one start to the next (docs/benchmarks.md, 2026-12-05). Peak memory is
 * unchanged: only memory the process already used is kept, at most 32 MiB of it. Setting it also fixes glibc's mmap
 * threshold at 128 KiB (no dynamic adjustment), which our 64 KiB reads and 32 KiB frames stay below.
 *
 * The Lambda runtimes (Amazon Linux 2023) and the task's image (Debian bookworm) use glibc; Lambda reserves no
 * `MALLOC_*` names (only `AWS_*`, `LAMBDA_*`, `_HANDLER`, `TZ` and the like).
 */
export const PROBE_PROCESS_ENV: Readonly<Record<string, string>> = {
  MALLOC_TRIM_THRESHOLD_: String(32 * 1024 * 1024),
};

/** Whether this process started with PROBE_PROCESS_ENV (glibc reads it only at start). */
export function startedWithProbeEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return Object.entries(PROBE_PROCESS_ENV).every(([k, v]) => env[k] === v);
}
