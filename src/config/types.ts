/** The deployment configuration's shapes (probe-config.ts parses it; the runtime config is its per-location part). */
import type { RunPlan } from '../vocabulary.js';

export type ClusterAuth =
  | {
      readonly type: 'eks';
      readonly clusterName: string;
      /** The cluster's region (default: the location's): DescribeCluster and the token are made for it. */
      readonly region?: string;
      /** Create an EKS access entry for the probe's role, in this Kubernetes group (bound by `kube-stream-probe manifest --group`). */
      readonly accessEntryGroup?: string;
    }
  | {
      readonly type: 'secret';
      readonly secretArn: string;
      /** The customer-managed KMS key the secret is encrypted with (the role then gets kms:Decrypt through Secrets Manager). */
      readonly kmsKeyArn?: string;
    };

export interface ClusterConfig {
  readonly name: string;
  /** https:// API server endpoint. */
  readonly endpoint: string;
  /** Base64 PEM CA; EKS clusters without it are looked up with eks:DescribeCluster. */
  readonly caData?: string;
  readonly auth: ClusterAuth;
  /** The target pod by name, else the first Running pod matching `selector` (default the manifest's label). */
  readonly target: {
    readonly namespace: string;
    readonly pod?: string;
    readonly selector?: string;
    readonly container?: string;
    readonly port: number;
    /** Also probe the per-node targets (`manifest --per-node`), up to LAMBDA_MAX_NODES at once. */
    readonly perNode?: boolean;
  };
}

export interface LocationConfig {
  readonly name: string;
  readonly account: string;
  readonly region: string;
  readonly vpc?: VpcPlacement;
  /** Cluster names probed from here (default: all). */
  readonly clusters?: readonly string[];
}

/** How the interface endpoints for the AWS APIs the function calls are reached from private subnets. */
export type EndpointsConfig =
  /**
   * Create them (monitoring; secretsmanager and eks when needed; with a long-hold task also ecr.api, ecr.dkr,
   * logs and an S3 gateway endpoint in `routeTableIds`) with their own security group.
   */
  | { readonly mode: 'create'; readonly routeTableIds?: readonly string[]; readonly s3PrefixListId?: string }
  /** They exist: the function may reach them through these security groups (and S3 through its prefix list). */
  | { readonly mode: 'existing'; readonly securityGroupIds: readonly string[]; readonly s3PrefixListId?: string }
  /** None: the AWS APIs are reached through a NAT gateway or an egress proxy (HTTPS to anywhere). */
  | { readonly mode: 'none' };

export interface VpcPlacement {
  readonly vpcId: string;
  readonly subnetIds: readonly string[];
  /** Security groups attached besides the one the construct creates (which allows only the egress the probe needs). */
  readonly securityGroupIds?: readonly string[];
  readonly availabilityZones?: readonly string[];
  /** Where the API servers are, for the egress rules (default anywhere, on each cluster's port). */
  readonly apiServerCidrs?: readonly string[];
  readonly endpoints: EndpointsConfig;
}

/** A schedule: its name, when it runs, and what each run does (the one RunPlan, config/plan.ts). */
export interface ScheduleConfig extends RunPlan {
  readonly name: string;
  /** EventBridge Scheduler expression: rate(5 minutes) or cron(...). */
  readonly expression: string;
}

export interface ProbeConfig {
  readonly project: string;
  /** Subscribed to the page topic, and to the ticket topic unless ticketEmail is set. */
  readonly alarmEmail?: string;
  /** Subscribed to the ticket topic (GA readiness, probe health) instead of alarmEmail. */
  readonly ticketEmail?: string;
  readonly alarms: {
    readonly evaluationPeriods: number;
    readonly datapointsToAlarm: number;
    readonly ticketHoldsWithoutPings: boolean;
    /** The upgrade SLO's objective per location × cluster (src/metrics/slo.ts); 0.999 by default. */
    readonly sloObjective: number;
  };
  /** Lambda memory; when absent, functionMemoryMb() sizes it by the location's cluster count. */
  readonly memoryMb?: number;
  readonly logRetentionDays: number;
  readonly locations: readonly LocationConfig[];
  readonly clusters: readonly ClusterConfig[];
  readonly schedules: readonly ScheduleConfig[];
  /** Cross-location paging (cross-location.ts): on by default when a cluster has several locations. */
  readonly crossLocation?: false | { readonly home?: string };
}
