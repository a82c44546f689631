/** The CLI's exit codes, for scripts and CI: what each means and what to do. */
export const EXIT = {
  /** Every verdict clean. */
  CLEAN: 0,
  /** A broken path was found (it wins over 3: a finding is a finding). */
  BROKEN: 1,
  /** Usage or configuration error: nothing was probed. */
  USAGE: 2,
  /** The probe could not measure (part of) the path: fix the probe's configuration (credentials, target, port). */
  NOT_MEASURED: 3,
  /** Every verdict clean, but the metrics could not be delivered (`--publish prometheus`): the printed results stand. */
  NOT_PUBLISHED: 4,
  /** Interrupted by SIGINT (Ctrl-C): what was measured is printed. */
  SIGINT: 130,
  /** Interrupted by SIGTERM: what was measured is printed. */
  SIGTERM: 143,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0  every verdict clean
  1  a broken path was found for the clients --fail-on names (default kubectl: a hop breaks kubectl of
     some version, or it works only through kubectl's fallback; websocket-only: SDK clients and browser
     terminals fail; any: either)
  2  usage or configuration error (nothing was probed)
  3  the probe could not measure this path: fix the probe's configuration
     (credentials rejected, target pod or namespace missing, port closed), or
     the API server could not be reached at all (verdict unreachable; audit: BLOCKED)
  4  every verdict clean, but the Pushgateway refused or did not answer
     (--publish prometheus): the results are printed, the dashboards lack them
  130, 143  interrupted by SIGINT (Ctrl-C) / SIGTERM: the sessions were closed and
     what was measured is printed, unfinished sessions marked interrupted`;
