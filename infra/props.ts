/**
 * The StreamProbe construct's props, in CDK's idiom: flat `readonly` props,
 * CDK types (Duration, IVpc, ISubnet, ISecurityGroup, ISecret, ITopic),
 * `@default` saying what happens when a prop is left out. One construct is one
 * network location. The YAML config (src/config/probe-config.ts) is the app's
 * front door and maps onto these (infra/location-stack.ts).
 */
import type { Duration } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { ClusterAuth } from '../src/config/probe-config.js';
import type { HoldShape, KeepaliveMode, Operation, TransferShape } from '../src/vocabulary.js';

/** How the function authenticates to a cluster. */
export type ProbeClusterAuth =
  /** The function's IAM role, as in the YAML config (region @default the stack's; accessEntryGroup @default none). */
  | Extract<ClusterAuth, { type: 'eks' }>
  | {
      readonly type: 'secret';
      /** Holds `{"token": …, "caData"?: …}`, `{"kubeconfig": …}` or a kubeconfig; may be in another region. Its encryption key, if any, is granted too. */
      readonly secret: secretsmanager.ISecret;
    };

export interface ProbeCluster {
  /** Lower-case letters, digits and "-": it names metrics, alarms and widgets. */
  readonly name: string;
  /** The https:// API server URL. */
  readonly endpoint: string;
  /** Base64 PEM of the cluster CA. @default - read with eks:DescribeCluster (EKS), or from the secret */
  readonly caData?: string;
  readonly auth: ProbeClusterAuth;
  readonly target: {
    readonly namespace: string;
    /** @default - the first Running pod labelled app.kubernetes.io/name=kube-stream-probe-target */
    readonly pod?: string;
    /** @default - that label */
    readonly selector?: string;
    /** @default - the pod's first container */
    readonly container?: string;
    /** @default 8080 */
    readonly port?: number;
    /** Also probe the per-node targets (`manifest --per-node`), up to 16 nodes per run, publishing NodesProbed/NodesFailing. @default false */
    readonly perNode?: boolean;
  };
}

export interface ProbeSchedule {
  /** Lower-case letters, digits and "-". */
  readonly name: string;
  /** An EventBridge Scheduler expression: `rate(5 minutes)` or `cron(...)` (UTC). */
  readonly expression: string;
  readonly holds: readonly Duration[];
  /** @default ['kubectl'] */
  readonly keepalives?: readonly KeepaliveMode[];
  /** @default - exec and port-forward */
  readonly operations?: readonly Operation[];
  /**
   * Also stream this much through each operation × transport each run, byte-exact (`8MiB`, `64MiB`; at most
   * 1GiB): the kubectl cp path, published as TransferComplete and TransferThroughput. Data through NAT gateways
   * and endpoints is billed per GB (README, "Cost"). @default - no transfer
   */
  readonly transfer?: string;
  /** What moves during exec holds, each its own row in the logs (shaped holds publish no metrics). @default - silent */
  readonly holdShapes?: readonly HoldShape[];
  /** How the transfer moves: echo, upload, download, small (exec: kubectl cp's directions), each its own row; only echo publishes metrics. @default - echo */
  readonly transferShapes?: readonly TransferShape[];
}

export interface ProbeAlarmOptions {
  /** Periods evaluated per alarm. @default 3 */
  readonly evaluationPeriods?: number;
  /** Failing periods (of evaluationPeriods) that make an alarm. @default 2 */
  readonly datapointsToAlarm?: number;
  /**
   * Ticket when a hold without pings is cut. Off by default: those holds measure a path's idle timeout (NAT
   * gateways, NLBs and VPC endpoints cut idle flows at 350 s), which is published as IdleTimeout instead.
   * @default false
   */
  readonly ticketHoldsWithoutPings?: boolean;
  /**
   * The upgrade SLO per cluster: the share of today's kubectl's upgrades that must get their stream (KEP-4006's
   * objective is 0.999). Multi-window burn-rate alarms page when the budget burns fast (src/metrics/slo.ts).
   * @default 0.999
   */
  readonly sloObjective?: number;
}

export interface StreamProbeProps {
  /** The network location this probe runs in (names the function, metrics and dashboard). */
  readonly locationName: string;
  /** @default 'kube-stream-probe' */
  readonly project?: string;
  readonly clusters: readonly ProbeCluster[];
  readonly schedules: readonly ProbeSchedule[];

  /** Run the function in this VPC. @default - no VPC (public AWS endpoints, public API servers) */
  readonly vpc?: ec2.IVpc;
  /** With vpc: the subnets for the function's network interfaces (and created endpoints). Required with vpc. */
  readonly subnets?: readonly ec2.ISubnet[];
  /** With vpc: groups attached besides the function's own (which allows only the egress the probe needs). @default - none */
  readonly securityGroups?: readonly ec2.ISecurityGroup[];
  /** With vpc: where the API servers are, for the egress rules. @default - anywhere, on each cluster's port */
  readonly apiServerPeers?: readonly ec2.IPeer[];
  /**
   * With vpc: how the AWS APIs are reached. 'create' makes interface endpoints (private subnets without NAT);
   * security groups: existing endpoints reachable through them; 'none': through NAT or a proxy.
   * @default 'none'
   */
  readonly interfaceEndpoints?: 'create' | 'none' | readonly ec2.ISecurityGroup[];
  /**
   * With vpc, endpoints ('create' or existing ones) and a schedule that runs as a task: how the task reaches S3,
   * where ECR keeps its image layers. Fargate pulls them through an S3 gateway endpoint, which a security group
   * without allow-all egress must reach by the region's S3 prefix list (`aws ec2 describe-managed-prefix-lists
   * --filters Name=prefix-list-name,Values=com.amazonaws.REGION.s3`). With 'create' the gateway endpoint is made
   * in `routeTableIds` (@default the subnets' route tables, when CDK knows them: imported subnets do not); with
   * existing endpoints it must exist already. @default - required in those cases, unused otherwise
   */
  readonly s3Gateway?: { readonly prefixListId: string; readonly routeTableIds?: readonly string[] };

  /**
   * The longest hold the container task runner accepts. Schedules with a hold longer than a Lambda run allows
   * (820 s) run as an ECS Fargate task in the location's VPC (vpc and subnets required).
   * @default Duration.hours(2)
   */
  readonly taskMaxHold?: Duration;
  /** @default - 512 MB up to three clusters, 1024 MB above: the CPU share an honest handshake time needs (docs/decisions.md) */
  readonly memorySize?: number;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;

  /** Where pages go: kubectl broken at this location. @default - a new encrypted topic, `pageEmail` subscribed */
  readonly pageTopic?: sns.ITopic;
  /**
   * Where tickets go: GA readiness (the fallback), nodes, probe health, and long-hold tasks that stopped without
   * finishing (from EventBridge: a topic of yours encrypted with a customer-managed key must let
   * events.amazonaws.com use the key, as it must let cloudwatch.amazonaws.com). @default - a new encrypted topic,
   * `ticketEmail` subscribed
   */
  readonly ticketTopic?: sns.ITopic;
  /** Subscribed to the created page topic. @default - none */
  readonly pageEmail?: string;
  /** Subscribed to the created ticket topic. @default - none */
  readonly ticketEmail?: string;
  /** Alarms, or false for none (the metrics are published either way). @default - enabled, 2 of 3 periods */
  readonly alarms?: ProbeAlarmOptions | false;
  /** @default true */
  readonly dashboard?: boolean;
  /** The Lambda entry file. @default - functions/probe.ts of this package */
  readonly entry?: string;
  /**
   * Pages of these clusters, which other locations probe too, go to the project's page bus (a CrossLocationPaging's
   * `eventBusArn`, maybe in another region or account) for its aggregator to page once for the cluster when every
   * location fails, or for this location otherwise; the page topic is their fallback when the bus refuses them.
   * The YAML app sets it for every cluster with several locations. @default - every page goes to the page topic
   */
  readonly forwardPages?: { readonly eventBusArn: string; readonly clusters: readonly string[] };
}
