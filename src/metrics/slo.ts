/**
 * The upgrade SLO, defined once for CloudWatch (infra/slo-alarms.ts: metric math) and Prometheus
 * (prometheus-rules.ts): the objective, its SLI, and the multi-window, multi-burn-rate alerts.
 *
 * - Objective: KEP-4006's own for upgrades, "99.9% of initial HTTP connections eventually succeed in upgrading to a
 *   streaming connection" (kubernetes/enhancements keps/sig-api-machinery/4006-transition-spdy-to-websockets, "What
 *   are the reasonable SLOs"). Per location × cluster; configurable (`alarms.sloObjective`).
 * - SLI: the KubectlUpgrade events (contract.ts): per kubectl row and run, today's kubectl gets its stream over
 *   WebSocket or through its fallback, after the retry (probe/retry.ts). The error ratio over a window is
 *   1 − their mean.
 * - Alerts: the SRE workbook's recommendation ("Alerting on SLOs", multiwindow, multi-burn-rate alerts; table 5-8):
 *   page when 2 % of a 30-day budget burns in 1 hour (burn rate 14.4), confirmed over 5 minutes, or 5 % in 6 hours
 *   (burn rate 6), confirmed over 30 minutes. The burn rate is the error ratio over the budget (1 − objective). The
 *   workbook's third row (10 % in 3 days, a ticket) has no CloudWatch form: an alarm looks back one day at most.
 */

/** KEP-4006's objective for upgrades. */
export const SLO_OBJECTIVE_DEFAULT = 0.999;

/** The budget's period the burn rates are taken against, days (the workbook's). */
export const SLO_PERIOD_DAYS = 30;

export interface BurnWindow {
  readonly name: 'fast' | 'slow';
  /** The long window, s: the burn must be this high over it ... */
  readonly longSeconds: number;
  /** ... and still over this short one (1/12 of the long: the alert ends soon after the burn does). */
  readonly shortSeconds: number;
  /** Error ratio ÷ (1 − objective) above which it alerts. */
  readonly burnRate: number;
  /** The share of the period's budget that burns in the long window at that rate. */
  readonly budgetShare: number;
}

export const BURN_WINDOWS: readonly BurnWindow[] = [
  { name: 'fast', longSeconds: 3600, shortSeconds: 300, burnRate: 14.4, budgetShare: 0.02 },
  { name: 'slow', longSeconds: 6 * 3600, shortSeconds: 1800, burnRate: 6, budgetShare: 0.05 },
];

/** "1h", "5m", "6h", "30m": a window as Prometheus writes it and people read it. */
export function windowText(seconds: number): string {
  return seconds % 3600 === 0 ? `${seconds / 3600}h` : `${seconds / 60}m`;
}

/** The objective as people read it: 99.9 %. */
export function objectiveText(objective: number): string {
  return `${Number((objective * 100).toFixed(4))} %`;
}

/** The objective a config may set: above 0 and below 1 (1 has no budget to burn). */
export function checkObjective(v: unknown): string | undefined {
  return typeof v === 'number' && v > 0 && v < 1 ? undefined : `${String(v)} must be a number between 0 and 1 (0.999 is 99.9 %)`;
}
