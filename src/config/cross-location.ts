/**
 * Cross-location paging, planned from the deployment config: which clusters several locations probe, which location
 * is home to the aggregator (infra/cross-location.ts, src/lambda/cross-location.ts), and how long a location's page
 * waits for the others to agree.
 *
 * The wait: every location runs the same schedules, so a failure on the cluster's side reaches each location's runs
 * within one run of the fastest schedule (the locations' timers differ only in phase), and each location's page alarm
 * fires at the first CloudWatch evaluation after that run publishes (its SLO fast burn: the alarm-storm replays);
 * one more minute for CloudWatch's evaluation and one for the notifier and EventBridge.
 */
import type { LocationConfig, ProbeConfig } from './types.js';
import { scheduleIntervalSeconds } from './schedule.js';

export interface CrossLocationPlan {
  readonly home: LocationConfig;
  /** The page bus's name and ARN (the name is fixed, so every location's stack knows the ARN without a reference). */
  readonly busName: string;
  readonly busArn: string;
  /** Each cluster probed from two or more locations: those locations, in config order. */
  readonly clusters: Readonly<Record<string, readonly string[]>>;
  /** How long a location's page waits for the other locations (s). */
  readonly waitSeconds: number;
  /** The accounts whose notifiers put pages on the bus. */
  readonly accounts: readonly string[];
}

/** The partition of a region (an ARN built before deploy). */
export function partitionOf(region: string): string {
  return region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
}

/** The clusters probed from more than one location, with their locations. */
export function sharedClusters(config: ProbeConfig): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const cluster of config.clusters) {
    const from = config.locations.filter((l) => !l.clusters || l.clusters.includes(cluster.name)).map((l) => l.name);
    if (from.length > 1) out[cluster.name] = from;
  }
  return out;
}

export const CROSS_LOCATION_MARGIN_SECONDS = 120;

/** The cross-location plan, or undefined when no cluster has two locations or the config turns it off. */
export function crossLocationPlan(config: ProbeConfig): CrossLocationPlan | undefined {
  if (config.crossLocation === false) return undefined;
  const clusters = sharedClusters(config);
  const names = Object.keys(clusters);
  if (!names.length) return undefined;
  const homeName = config.crossLocation?.home ?? config.locations.find((l) => names.some((c) => clusters[c]!.includes(l.name)))!.name;
  const home = config.locations.find((l) => l.name === homeName)!;
  const busName = `${config.project}-pages`;
  const involved = new Set(Object.values(clusters).flat());
  const fastest = Math.min(...config.schedules.map((s) => scheduleIntervalSeconds(s.expression)));
  return {
    home,
    busName,
    busArn: `arn:${partitionOf(home.region)}:events:${home.region}:${home.account}:event-bus/${busName}`,
    clusters,
    waitSeconds: fastest + CROSS_LOCATION_MARGIN_SECONDS,
    accounts: [...new Set(config.locations.filter((l) => involved.has(l.name)).map((l) => l.account))],
  };
}
