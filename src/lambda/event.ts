/** The Lambda event: optional overrides of the configured plan (config/plan.ts, the one parser), validated with field names. */
import { Checker } from '../config/checker.js';
import { PLAN_FIELDS, PLAN_NAMES, parsePlan } from '../config/plan.js';
import type { RunPlan } from '../vocabulary.js';

export interface ProbeEvent extends RunPlan {
  readonly schedule?: string;
  readonly clusters?: readonly string[];
}

export const EVENT_FIELDS = ['schedule', 'clusters', ...PLAN_FIELDS] as const;

export function parseProbeEvent(raw: unknown): ProbeEvent {
  const c: Checker = new Checker('');
  const e = c.only(raw ?? {}, 'event', EVENT_FIELDS);
  if (e.clusters !== undefined && (!Array.isArray(e.clusters) || !e.clusters.every((x) => typeof x === 'string')))
    c.fail('event.clusters', 'must be a list of cluster names');
  // An empty list would probe nothing and answer ok: leave the field out to probe every configured cluster.
  if (Array.isArray(e.clusters) && e.clusters.length === 0) c.fail('event.clusters', 'is empty: name at least one cluster, or leave it out to probe them all');
  if (e.schedule !== undefined && typeof e.schedule !== 'string') c.fail('event.schedule', 'must be a string');
  return {
    ...parsePlan({ checker: c, names: PLAN_NAMES.document, at: 'event.' }, e),
    schedule: e.schedule as string | undefined,
    clusters: e.clusters as string[] | undefined,
  };
}
