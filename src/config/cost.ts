/**
 * Monthly cost of one location, from its configuration. Prices are AWS list
 * prices for us-east-1 as of 2026-12 (arm64 Lambda); other regions differ a
 * little. Free tiers are ignored (they would only lower the total).
 */
import { parseDurationSeconds } from '../vocabulary.js';
import { neededEndpointServices } from './aws-apis.js';
import { functionMemoryMb, runtimeConfigFor, scheduleIntervalSeconds, type LocationConfig, type ProbeConfig } from './probe-config.js';

export const PRICES = {
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  customMetricPerMonth: 0.3,
  alarmPerMonth: 0.1,
  dashboardPerMonth: 3.0,
  putMetricDataPer1000: 0.01,
  schedulerPerMillion: 1.0,
  logsIngestPerGb: 0.5,
  /** An interface VPC endpoint, per hour and availability zone (subnet). */
  interfaceEndpointPerAzHour: 0.01,
  /** A customer-managed KMS key (the alarm topic's). */
  kmsKeyPerMonth: 1.0,
  /** CloudWatch Synthetics canary run, the peer a scheduled probe is compared with. */
  syntheticsCanaryRun: 0.0012,
} as const;

/** Seconds one run takes: the longest hold, plus handshakes, echoes and publishing. */
export const RUN_OVERHEAD_SECONDS = 3;
const SECONDS_PER_MONTH = 30 * 24 * 3600;

export interface CostEstimate {
  readonly runsPerMonth: number;
  readonly lambdaUsd: number;
  readonly metricsUsd: number;
  readonly alarmsUsd: number;
  readonly dashboardUsd: number;
  /** Interface endpoints (private subnets without NAT) and the alarm topic's KMS key. */
  readonly networkUsd: number;
  readonly otherUsd: number;
  readonly totalUsd: number;
  readonly metrics: number;
  readonly alarms: number;
}

export function lambdaCostPerRun(durationSeconds: number, memoryMb: number): number {
  return durationSeconds * (memoryMb / 1024) * PRICES.lambdaArmPerGbSecond + PRICES.lambdaPerMillionRequests / 1e6;
}

export function estimateMonthlyCost(config: ProbeConfig, location: LocationConfig): CostEstimate {
  const clusters = runtimeConfigFor(config, location).clusters.length;
  let runs = 0;
  let lambdaUsd = 0;
  const holdKeys = new Set<string>();
  for (const s of config.schedules) {
    const perMonth = SECONDS_PER_MONTH / scheduleIntervalSeconds(s.expression);
    const longest = Math.max(...s.holds.map((h) => parseDurationSeconds('hold', h)));
    runs += perMonth;
    lambdaUsd += perMonth * lambdaCostPerRun(longest + RUN_OVERHEAD_SECONDS, functionMemoryMb(config, location));
    for (const h of s.holds.map((x) => parseDurationSeconds('hold', x)).filter((x) => x > 0)) for (const k of s.keepalives) holdKeys.add(`${h}/${k}`);
  }
  const opsTransports = 4;
  // UpgradeSuccess + HandshakeLatency, HoldSurvived + DisconnectTime per hold/keepalive, SilentFallback per op, PublishFailures.
  const metrics = clusters * (opsTransports * 2 + holdKeys.size * opsTransports * 2 + 2) + 1;
  const alarms = clusters * (opsTransports + holdKeys.size * opsTransports + 2) + 2;
  const metricsUsd = metrics * PRICES.customMetricPerMonth + (runs * PRICES.putMetricDataPer1000) / 1000;
  const otherUsd = (runs * PRICES.schedulerPerMillion) / 1e6 + ((runs * 2048) / 1e9) * PRICES.logsIngestPerGb;
  const alarmsUsd = alarms * PRICES.alarmPerMonth;
  const endpoints = location.vpc?.endpoints.mode === 'create' ? neededEndpointServices(runtimeConfigFor(config, location).clusters).length * location.vpc.subnetIds.length : 0;
  const networkUsd = endpoints * PRICES.interfaceEndpointPerAzHour * (SECONDS_PER_MONTH / 3600) + PRICES.kmsKeyPerMonth;
  const total = lambdaUsd + metricsUsd + alarmsUsd + PRICES.dashboardPerMonth + networkUsd + otherUsd;
  const r2 = (n: number) => Math.round(n * 100) / 100;
  return { runsPerMonth: Math.round(runs), lambdaUsd: r2(lambdaUsd), metricsUsd: r2(metricsUsd), alarmsUsd: r2(alarmsUsd), dashboardUsd: PRICES.dashboardPerMonth, networkUsd: r2(networkUsd), otherUsd: r2(otherUsd), totalUsd: r2(total), metrics, alarms };
}
