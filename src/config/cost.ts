/**
 * Monthly cost of one location, from its configuration. Prices are AWS list
 * prices for us-east-1 as of 2026-12 (arm64 Lambda); other regions differ a
 * little. Free tiers are ignored (they would only lower the total).
 */
import { crossLocationPlan } from './cross-location.js';
import { BURN_WINDOWS } from '../metrics/slo.js';
import { TASK_MEMORY_MIB, TASK_VCPUS } from './location-size.js';
import { OPERATIONS, TRANSPORTS } from '../vocabulary.js';
import { METRIC_KEEPALIVES } from '../metrics/contract.js';
import { neededEndpointServices } from './aws-apis.js';
import { RUN_OVERHEAD_SECONDS } from './lambda-limits.js';
import { holdSpan, runnerFor, transferSessions } from './plan.js';
import { functionMemoryMb, runtimeConfigFor, type LocationConfig, type ProbeConfig } from './probe-config.js';
import { averageIntervalSeconds } from './schedule.js';

export const PRICES = {
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  customMetricPerMonth: 0.3,
  alarmPerMonth: 0.1,
  /** A composite alarm (the pages and the two tickets). */
  compositeAlarmPerMonth: 0.5,
  dashboardPerMonth: 3.0,
  putMetricDataPer1000: 0.01,
  schedulerPerMillion: 1.0,
  logsIngestPerGb: 0.5,
  /** An interface VPC endpoint, per hour and availability zone (subnet). */
  interfaceEndpointPerAzHour: 0.01,
  /** A customer-managed KMS key (the alarm topic's). */
  kmsKeyPerMonth: 1.0,
  /** ECS Fargate, Linux/arm64, per vCPU-hour and per GB-hour (the task runner: 0.25 vCPU, 0.5 GB). */
  fargateArmVcpuHour: 0.03238,
  fargateArmGbHour: 0.00356,
  /** A NAT gateway, per GB processed (either direction): the upper bound for a transfer's bytes to a public API endpoint. */
  natGatewayPerGb: 0.045,
  /** CloudWatch Synthetics canary run, the peer a scheduled probe is compared with. */
  syntheticsCanaryRun: 0.0012,
} as const;

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
  /**
   * `transfer` schedules: the bytes they move (sent and received, every operation × transport) priced at a NAT
   * gateway's per-GB processing, the most a path from a VPC bills; direct internet egress from Lambda outside a VPC
   * bills data transfer out for what is sent instead, and a private endpoint in the same zone nothing.
   */
  readonly transferUsd: number;
  readonly transferGbPerMonth: number;
  /** Interface endpoints × the subnets (zones) they are in: what is billed by the hour. */
  readonly interfaceEndpoints: number;
}

/** One task run of `durationSeconds` at the task runner's size (0.25 vCPU, 512 MB); Fargate bills at least a minute. */
export function taskCostPerRun(durationSeconds: number): number {
  return (Math.max(60, durationSeconds) / 3600) * (TASK_VCPUS * PRICES.fargateArmVcpuHour + (TASK_MEMORY_MIB / 1024) * PRICES.fargateArmGbHour);
}

export function lambdaCostPerRun(durationSeconds: number, memoryMb: number): number {
  return durationSeconds * (memoryMb / 1024) * PRICES.lambdaArmPerGbSecond + PRICES.lambdaPerMillionRequests / 1e6;
}

export function estimateMonthlyCost(config: ProbeConfig, location: LocationConfig): CostEstimate {
  const located = runtimeConfigFor(config, location).clusters;
  const clusters = located.length;
  let runs = 0;
  let lambdaUsd = 0;
  let transferBytes = 0;
  for (const s of config.schedules) {
    const perMonth = SECONDS_PER_MONTH / averageIntervalSeconds(s.expression);
    // Out and back through every operation × transport, for each cluster.
    transferBytes += perMonth * clusters * 2 * (s.transferBytes ?? 0) * transferSessions(s);
    const longest = holdSpan(s);
    runs += perMonth;
    // Holds longer than a Lambda run allows run as an ECS Fargate task (counted here with the compute).
    lambdaUsd +=
      perMonth *
      (runnerFor(s) === 'task'
        ? taskCostPerRun(longest + RUN_OVERHEAD_SECONDS)
        : lambdaCostPerRun(longest + RUN_OVERHEAD_SECONDS, functionMemoryMb(config, location)));
  }
  const { metrics, alarms, composites } = countMetricsAndAlarms(config, clusters, located.filter((c) => c.target.perNode).length);
  const metricsUsd = metrics * PRICES.customMetricPerMonth + (runs * PRICES.putMetricDataPer1000) / 1000;
  const otherUsd = (runs * PRICES.schedulerPerMillion) / 1e6 + ((runs * 2048) / 1e9) * PRICES.logsIngestPerGb;
  const alarmsUsd = alarms * PRICES.alarmPerMonth + composites * PRICES.compositeAlarmPerMonth;
  // A long-hold task in private subnets also needs ECR (api, dkr) and Logs endpoints (the S3 gateway endpoint is free).
  const taskRunner = config.schedules.some((s) => runnerFor(s) === 'task');
  const endpoints =
    location.vpc?.endpoints.mode === 'create'
      ? neededEndpointServices(runtimeConfigFor(config, location).clusters, { taskRunner }).length * location.vpc.subnetIds.length
      : 0;
  const networkUsd = endpoints * PRICES.interfaceEndpointPerAzHour * (SECONDS_PER_MONTH / 3600) + PRICES.kmsKeyPerMonth;
  const transferGbPerMonth = transferBytes / 1e9;
  const transferUsd = transferGbPerMonth * PRICES.natGatewayPerGb;
  const total = lambdaUsd + metricsUsd + alarmsUsd + PRICES.dashboardPerMonth + networkUsd + otherUsd + transferUsd;
  const r2 = (n: number) => Math.round(n * 100) / 100;
  return {
    runsPerMonth: Math.round(runs),
    lambdaUsd: r2(lambdaUsd),
    metricsUsd: r2(metricsUsd),
    alarmsUsd: r2(alarmsUsd),
    dashboardUsd: PRICES.dashboardPerMonth,
    networkUsd: r2(networkUsd),
    otherUsd: r2(otherUsd),
    transferUsd: r2(transferUsd),
    transferGbPerMonth: Math.round(transferGbPerMonth * 10) / 10,
    totalUsd: r2(total),
    metrics,
    alarms: alarms + composites,
    interfaceEndpoints: endpoints,
  };
}

/**
 * The metrics one location publishes and the alarms infra/alarms.ts makes for it (the infra tests
 * check these counts against the synthesized template). Per cluster and operation: UpgradeSuccess and
 * HandshakeLatency per transport, HoldSurvived and DisconnectTime per transport × keepalive × hold,
 * IdleTimeout per transport (holds without pings), SilentFallback and KubectlWorks; ProbeError, KubectlUpgrade
 * per cluster; PublishFailures and Flapping per location.
 */
export function countMetricsAndAlarms(config: ProbeConfig, clusters: number, perNodeClusters = 0): { metrics: number; alarms: number; composites: number } {
  let metrics = 0;
  let alarms = 0;
  let operations = 0;
  let transfers = false;
  for (const op of OPERATIONS) {
    const covering = config.schedules.filter((s) => s.operations.includes(op));
    if (covering.length === 0) continue;
    operations++;
    const holds = (k: string) => new Set(covering.filter((s) => s.keepalives.includes(k as never)).flatMap((s) => s.holdsSeconds.filter((h) => h > 0))).size;
    const holdKeys = METRIC_KEEPALIVES.reduce((n, k) => n + holds(k), 0);
    const withoutPings = covering.some((s) => s.keepalives.includes('none')) ? 1 : 0;
    const transfer = covering.some((s) => s.transferBytes) ? 1 : 0;
    transfers ||= transfer === 1;
    metrics += TRANSPORTS.length * (2 + 2 * holdKeys + withoutPings + 2 * transfer) + 2;
    // upgrade per transport, a hold alarm per transport × alarmed hold, a transfer alarm per transport, kubectl-broken, silent-fallback.
    alarms += TRANSPORTS.length * (1 + holds('kubectl') + (config.alarms.ticketHoldsWithoutPings ? holds('none') : 0) + transfer) + 2;
  }
  // A cluster probed per node adds NodesProbed and NodesFailing per operation × transport, a nodes-failing alarm per
  // operation × transport and one no-nodes-probed alarm; the location gets a nodes ticket composite.
  const perNode = { metrics: 2 * operations * TRANSPORTS.length, alarms: operations * TRANSPORTS.length + 1 };
  // Per cluster: ProbeError and KubectlUpgrade (the SLO's events); its not-measured alarm and a long and a short
  // burn-rate alarm per SLO window (src/metrics/slo.ts). Per location: PublishFailures and Flapping; six probe-health
  // alarms (publish failures, errors, throttles, duration, two Scheduler) and the flapping alarm; composites: a page
  // per cluster, the GA-readiness, probe-health and flapping tickets, nodes and transfers when there are any.
  // KubectlUpgrade is published only where some schedule runs kubectl's keepalive or a hold of 0 (datums.ts).
  const sloEvents = config.schedules.some((s) => s.keepalives.includes('kubectl') || s.holdsSeconds.includes(0)) ? 1 : 0;
  const perCluster = { metrics: 1 + sloEvents, alarms: 1 + 2 * BURN_WINDOWS.length };
  return {
    metrics: clusters * (metrics + perCluster.metrics) + perNodeClusters * perNode.metrics + 2,
    // + the notifier's two (its errors; EventBridge failing to invoke it).
    alarms: clusters * (alarms + perCluster.alarms) + perNodeClusters * perNode.alarms + 7 + 2,
    composites: clusters + 3 + (perNodeClusters > 0 ? 1 : 0) + (transfers ? 1 : 0),
  };
}

/**
 * The cross-location stack (infra/cross-location.ts), when a cluster has several locations: its topic's key and its
 * two alarms (the aggregator failed, its rule could not invoke it). Its function, table, queue and bus bill per page
 * state change: a few a month, well under a cent.
 */
export const CROSS_LOCATION_ALARMS = 2;
export function crossLocationMonthlyCost(config: ProbeConfig): { home: string; alarms: number; totalUsd: number } | undefined {
  const plan = crossLocationPlan(config);
  if (!plan) return undefined;
  return { home: plan.home.name, alarms: CROSS_LOCATION_ALARMS, totalUsd: PRICES.kmsKeyPerMonth + CROSS_LOCATION_ALARMS * PRICES.alarmPerMonth };
}
