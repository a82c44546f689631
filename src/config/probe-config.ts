/**
 * The deployment configuration: locations (account, region, optional VPC),
 * clusters (endpoint, auth, target) and schedules (holds, keepalives, rate).
 * One file validates it for both the CDK app and the Lambda, with errors that
 * name the field (`locations[1].vpc.subnetIds: …`).
 */
import { probeError } from '../errors.js';
import { KEEPALIVES, OPERATIONS, parseDurationSeconds, type KeepaliveMode, type Operation } from '../vocabulary.js';
import { TASK_MAX_HOLD_SECONDS } from './lambda-limits.js';
import { ALARM_DEFAULTS, DEFAULT_TARGET_PORT, RULES, duplicateName } from './rules.js';
import { scheduleIntervalSeconds } from './schedule.js';

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

export interface ScheduleConfig {
  readonly name: string;
  /** EventBridge Scheduler expression: rate(5 minutes) or cron(...). */
  readonly expression: string;
  readonly holds: readonly string[];
  readonly keepalives: readonly KeepaliveMode[];
  readonly operations?: readonly Operation[];
}

export interface ProbeConfig {
  readonly project: string;
  /** Subscribed to the page topic, and to the ticket topic unless ticketEmail is set. */
  readonly alarmEmail?: string;
  /** Subscribed to the ticket topic (GA readiness, probe health) instead of alarmEmail. */
  readonly ticketEmail?: string;
  readonly alarms: { readonly evaluationPeriods: number; readonly datapointsToAlarm: number; readonly ticketHoldsWithoutPings: boolean };
  /** Lambda memory; when absent, functionMemoryMb() sizes it by the location's cluster count. */
  readonly memoryMb?: number;
  readonly logRetentionDays: number;
  readonly locations: readonly LocationConfig[];
  readonly clusters: readonly ClusterConfig[];
  readonly schedules: readonly ScheduleConfig[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export { MAX_FUNCTION_NAME_LENGTH, NAME_PATTERN } from './rules.js';
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;

class Checker {
  constructor(private readonly source: string) {}
  fail(field: string, rule: string): never {
    throw probeError('CONFIG_INVALID', `${this.source}: ${field} ${rule}`, { field });
  }
  /** A shared rule (rules.ts) applied to a field. */
  check(field: string, problem: string | undefined): void {
    if (problem) this.fail(field, problem);
  }
  /** A name (rules.ts RULES.name), required. */
  name(o: Obj, field: string): string {
    const v = this.str(o, 'name', field);
    this.check(`${field}.name`, RULES.name(v));
    return v;
  }
  obj(v: unknown, field: string): Obj {
    if (!isObj(v)) this.fail(field, 'must be an object');
    return v;
  }
  /** An object with only these keys: a misspelt one (`cadata`, `taget`) is refused with the nearest known name. */
  only(v: unknown, field: string, keys: readonly string[]): Obj {
    const o = this.obj(v, field);
    for (const k of Object.keys(o)) {
      if (o[k] === undefined || keys.includes(k)) continue;
      const near = nearest(k, keys);
      this.fail(
        `${field === 'the document' ? '' : `${field}.`}${k}`,
        `is not a known field${near ? `: did you mean "${near}"?` : ''} (known: ${keys.join(', ')})`,
      );
    }
    return o;
  }
  str(o: Obj, key: string, field: string, pattern?: RegExp, rule?: string): string {
    const v = o[key];
    if (typeof v !== 'string' || v.length === 0) this.fail(`${field}.${key}`, 'is required (a non-empty string)');
    if (pattern && !pattern.test(v)) this.fail(`${field}.${key}`, `"${v}" ${rule ?? `must match ${pattern}`}`);
    return v;
  }
  optStr(o: Obj, key: string, field: string, pattern?: RegExp, rule?: string): string | undefined {
    return o[key] === undefined ? undefined : this.str(o, key, field, pattern, rule);
  }
  arr(o: Obj, key: string, field: string, min = 0): unknown[] {
    const v = o[key];
    if (!Array.isArray(v)) this.fail(`${field}.${key}`, 'must be a list');
    if (v.length < min) this.fail(`${field}.${key}`, `must have at least ${min} item${min === 1 ? '' : 's'}`);
    return v;
  }
  strings(o: Obj, key: string, field: string, min: number, pattern?: RegExp, rule?: string): string[] {
    return this.arr(o, key, field, min).map((v, i) => {
      if (typeof v !== 'string' || (pattern && !pattern.test(v))) this.fail(`${field}.${key}[${i}]`, `"${String(v)}" ${rule ?? 'must be a string'}`);
      return v;
    });
  }
  oneOfEach<T extends string>(o: Obj, key: string, field: string, allowed: readonly T[]): T[] {
    const pattern = new RegExp(`^(${allowed.join('|')})$`);
    return this.strings(o, key, field, 1, pattern, `must be one of ${allowed.join(', ')}`) as T[];
  }
  bool(o: Obj, key: string, field: string, fallback: boolean): boolean {
    const v = o[key] ?? fallback;
    if (typeof v !== 'boolean') this.fail(`${field}.${key}`, 'must be true or false');
    return v;
  }
  int(o: Obj, key: string, field: string, min: number, max: number, fallback?: number): number {
    const v = o[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.fail(`${field}.${key}`, `must be a whole number from ${min} to ${max}`);
    return v;
  }
}

/** The known name closest to a misspelt one (case-insensitive edit distance ≤ 3, a swap of two letters counting one), if any. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) {
        const cost = a[i - 1] === b[j - 1] ? 0 : 1;
        d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
      }
    }
    return d[a.length]![b.length]!;
  };
  const scored = known.map((k) => ({ k, n: distance(word.toLowerCase(), k.toLowerCase()) })).sort((x, y) => x.n - y.n);
  return scored[0] && scored[0].n <= 3 ? scored[0].k : undefined;
}

/** The retention periods CloudWatch Logs accepts. */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

function retention(c: Checker, days: number): number {
  if (!(LOG_RETENTION_DAYS as readonly number[]).includes(days))
    c.fail('config.logRetentionDays', `${days} is not one CloudWatch Logs accepts (${LOG_RETENTION_DAYS.join(', ')})`);
  return days;
}

function unique(c: Checker, items: readonly { name: string }[], field: string): void {
  const twice = duplicateName(items);
  if (twice) c.fail(`${field}[${twice.index}].name`, twice.problem);
}

/** The clusters, by the same rules wherever they come from: the config file, or the deployed function's KSP_LOCATION_CONFIG. */
function parseClusters(c: Checker, list: readonly unknown[]): ClusterConfig[] {
  return list.map((v, i): ClusterConfig => {
    const f = `clusters[${i}]`;
    const o = c.only(v, f, ['name', 'endpoint', 'caData', 'auth', 'target']);
    const endpoint = c.str(o, 'endpoint', f);
    c.check(`${f}.endpoint`, RULES.endpoint(endpoint));
    const a = c.only(o.auth, `${f}.auth`, ['type', 'clusterName', 'region', 'accessEntryGroup', 'secretArn', 'kmsKeyArn']);
    let auth: ClusterAuth;
    if (a.type === 'eks') {
      auth = {
        type: 'eks',
        clusterName: c.str(a, 'clusterName', `${f}.auth`, /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, 'is not an EKS cluster name'),
        region: c.optStr(a, 'region', `${f}.auth`, REGION, 'is not an AWS region'),
        accessEntryGroup: c.optStr(a, 'accessEntryGroup', `${f}.auth`, /^[a-z0-9]([-a-z0-9.:]{0,61}[a-z0-9])?$/, 'is not a Kubernetes group name'),
      };
    } else if (a.type === 'secret') {
      auth = {
        type: 'secret',
        secretArn: c.str(
          a,
          'secretArn',
          `${f}.auth`,
          /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
          'is not a Secrets Manager secret ARN',
        ),
        kmsKeyArn: c.optStr(a, 'kmsKeyArn', `${f}.auth`, /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/, 'is not a KMS key ARN'),
      };
    } else c.fail(`${f}.auth.type`, 'must be "eks" or "secret"');
    const t = c.only(o.target, `${f}.target`, ['namespace', 'pod', 'selector', 'container', 'port', 'perNode']);
    return {
      name: c.name(o, f),
      endpoint,
      caData: c.optStr(o, 'caData', f, /^[A-Za-z0-9+/=\s]+$/, 'must be base64'),
      auth,
      target: {
        namespace: c.str(t, 'namespace', `${f}.target`, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'is not a namespace name'),
        pod: c.optStr(t, 'pod', `${f}.target`, /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'is not a pod name'),
        selector: c.optStr(
          t,
          'selector',
          `${f}.target`,
          /^[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*(,[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*)*$/,
          'is not a label selector (k=v,k2=v2)',
        ),
        container: c.optStr(t, 'container', `${f}.target`),
        port: (() => {
          const port = t.port ?? DEFAULT_TARGET_PORT;
          c.check(`${f}.target.port`, RULES.port(port));
          return port as number;
        })(),
        perNode: t.perNode === undefined ? undefined : c.bool(t, 'perNode', `${f}.target`, false),
      },
    };
  });
}

export function parseProbeConfig(raw: unknown, source = 'config'): ProbeConfig {
  // Explicitly typed so TypeScript treats c.fail() (never) as the end of a branch.
  const c: Checker = new Checker(source);
  const root = c.only(raw, 'the document', [
    'project',
    'alarmEmail',
    'ticketEmail',
    'alarms',
    'memoryMb',
    'logRetentionDays',
    'locations',
    'clusters',
    'schedules',
  ]);
  const clusters = parseClusters(c, c.arr(root, 'clusters', 'config', 1));
  unique(c, clusters, 'clusters');
  const clusterNames = new Set(clusters.map((x) => x.name));
  const locations = c.arr(root, 'locations', 'config', 1).map((v, i): LocationConfig => {
    const f = `locations[${i}]`;
    const o = c.only(v, f, ['name', 'account', 'region', 'vpc', 'clusters']);
    let vpc: LocationConfig['vpc'];
    if (o.vpc !== undefined) {
      const vo = c.only(o.vpc, `${f}.vpc`, ['vpcId', 'subnetIds', 'securityGroupIds', 'availabilityZones', 'apiServerCidrs', 'endpoints']);
      const SG = /^sg-[0-9a-f]{8,17}$/;
      const eo =
        vo.endpoints === undefined
          ? { mode: 'none' }
          : c.only(vo.endpoints, `${f}.vpc.endpoints`, ['mode', 'securityGroupIds', 'routeTableIds', 's3PrefixListId']);
      let endpoints: EndpointsConfig;
      const PL = /^pl-[0-9a-f]{8,17}$/;
      const s3PrefixListId = c.optStr(eo, 's3PrefixListId', `${f}.vpc.endpoints`, PL, 'is not a prefix list id (pl-…)');
      if (eo.mode === 'none') endpoints = { mode: 'none' };
      else if (eo.mode === 'create') {
        const routeTableIds =
          eo.routeTableIds === undefined
            ? undefined
            : c.strings(eo, 'routeTableIds', `${f}.vpc.endpoints`, 1, /^rtb-[0-9a-f]{8,17}$/, 'is not a route table id');
        endpoints = { mode: 'create', routeTableIds, s3PrefixListId };
      } else if (eo.mode === 'existing')
        endpoints = {
          mode: 'existing',
          securityGroupIds: c.strings(eo, 'securityGroupIds', `${f}.vpc.endpoints`, 1, SG, 'is not a security group id'),
          s3PrefixListId,
        };
      else c.fail(`${f}.vpc.endpoints.mode`, 'must be "create", "existing" or "none"');
      vpc = {
        vpcId: c.str(vo, 'vpcId', `${f}.vpc`, /^vpc-[0-9a-f]{8,17}$/, 'is not a VPC id'),
        subnetIds: c.strings(vo, 'subnetIds', `${f}.vpc`, 1, /^subnet-[0-9a-f]{8,17}$/, 'is not a subnet id'),
        securityGroupIds: vo.securityGroupIds === undefined ? undefined : c.strings(vo, 'securityGroupIds', `${f}.vpc`, 1, SG, 'is not a security group id'),
        availabilityZones:
          vo.availabilityZones === undefined
            ? undefined
            : c.strings(vo, 'availabilityZones', `${f}.vpc`, 1, /^[a-z]{2}(-[a-z]+)+-\d[a-z]$/, 'is not an availability zone'),
        apiServerCidrs:
          vo.apiServerCidrs === undefined
            ? undefined
            : c.strings(vo, 'apiServerCidrs', `${f}.vpc`, 1, /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, 'is not an IPv4 CIDR'),
        endpoints,
      };
    }
    const only = o.clusters === undefined ? undefined : c.strings(o, 'clusters', f, 1);
    only?.forEach((n, j) => clusterNames.has(n) || c.fail(`${f}.clusters[${j}]`, `"${n}" is not a cluster in clusters[]`));
    return {
      name: c.name(o, f),
      account: c.str(o, 'account', f, /^\d{12}$/, 'must be a 12-digit AWS account id'),
      region: c.str(o, 'region', f, REGION, 'is not an AWS region'),
      vpc,
      clusters: only,
    };
  });
  unique(c, locations, 'locations');
  const project = c.optStr(root, 'project', 'config') ?? 'kube-stream-probe';
  c.check('project', RULES.name(project));
  locations.forEach((l, i) => {
    c.check(`locations[${i}].name`, RULES.functionName(project, l.name));
    for (const cl of clusters.filter((x) => !l.clusters || l.clusters.includes(x.name))) {
      if (cl.auth.type === 'eks' && cl.auth.accessEntryGroup)
        c.check(`clusters[${clusters.indexOf(cl)}].auth.accessEntryGroup`, RULES.accessEntryRegion(cl.auth.region, l.region));
    }
  });
  const schedules = c.arr(root, 'schedules', 'config', 1).map((v, i): ScheduleConfig => {
    const f = `schedules[${i}]`;
    const o = c.only(v, f, ['name', 'expression', 'holds', 'keepalives', 'operations']);
    const holds = c.strings(o, 'holds', f, 1);
    holds.forEach((h, j) => {
      let s: number;
      try {
        s = parseDurationSeconds('hold', h, 'CONFIG_INVALID');
      } catch {
        c.fail(`${f}.holds[${j}]`, `"${h}" is not a duration (0s, 65s, 6m)`);
      }
      // Longer than a Lambda run allows: the schedule runs as an ECS Fargate task (in the location's VPC), up to TASK_MAX_HOLD_SECONDS.
      c.check(`${f}.holds[${j}]`, RULES.holdWithin(s, h, TASK_MAX_HOLD_SECONDS));
    });
    const keepalives = o.keepalives === undefined ? ['kubectl'] : c.oneOfEach(o, 'keepalives', f, KEEPALIVES);
    const operations = o.operations === undefined ? undefined : c.oneOfEach(o, 'operations', f, OPERATIONS);
    return {
      name: c.name(o, f),
      expression: (() => {
        const e = c.str(
          o,
          'expression',
          f,
          /^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(.+\))$/,
          'must be rate(N minutes|hours|days) or cron(...)',
        );
        scheduleIntervalSeconds(e, `${source}: ${f}.expression`); // a cron that cannot be alarmed on is refused here
        return e;
      })(),
      holds,
      keepalives: keepalives as KeepaliveMode[],
      operations,
    };
  });
  unique(c, schedules, 'schedules');
  const alarms = root.alarms === undefined ? {} : c.only(root.alarms, 'alarms', ['evaluationPeriods', 'datapointsToAlarm', 'ticketHoldsWithoutPings']);
  const evaluationPeriods = (alarms.evaluationPeriods ?? ALARM_DEFAULTS.evaluationPeriods) as number;
  c.check('alarms.evaluationPeriods', RULES.evaluationPeriods(evaluationPeriods));
  const datapointsToAlarm = (alarms.datapointsToAlarm ?? ALARM_DEFAULTS.datapointsToAlarm) as number;
  c.check('alarms.datapointsToAlarm', RULES.datapointsToAlarm(datapointsToAlarm, evaluationPeriods));
  schedules.forEach((s, i) => {
    const f = `schedules[${i}]`;
    c.check(`${f}.expression`, RULES.alarmable(s.expression, evaluationPeriods, `${source}: ${f}.expression`));
    const longest = Math.max(...s.holds.map((h) => parseDurationSeconds('hold', h)));
    c.check(`${f}.expression`, RULES.noOverlap(s.expression, longest, `${source}: ${f}.expression`));
    // A long hold runs as a task in the location's VPC: every location that runs this schedule needs one.
    locations.forEach((l, k) =>
      c.check(
        `locations[${k}].vpc`,
        l.vpc ? undefined : RULES.taskNeedsVpc(longest, false)?.replace(/^hold/, `is required: schedule "${s.name}" has a hold of`),
      ),
    );
  });
  const memoryMb = root.memoryMb;
  if (memoryMb !== undefined) c.check('memoryMb', RULES.memoryMb(memoryMb));
  return {
    project,
    alarmEmail: c.optStr(root, 'alarmEmail', 'config', EMAIL, 'is not an email address'),
    ticketEmail: c.optStr(root, 'ticketEmail', 'config', EMAIL, 'is not an email address'),
    alarms: { evaluationPeriods, datapointsToAlarm, ticketHoldsWithoutPings: c.bool(alarms, 'ticketHoldsWithoutPings', 'alarms', false) },
    memoryMb: memoryMb as number | undefined,
    logRetentionDays: retention(c, c.int(root, 'logRetentionDays', 'config', 1, 3653, 30)),
    locations,
    clusters,
    schedules,
  };
}

/**
 * Lambda memory for a location, chosen for CPU, not memory: a full run peaks at 75-88 MB RSS, but
 * Lambda gives CPU in proportion to memory (one vCPU at 1769 MB), and HandshakeLatency is only the
 * path's when the function is not starved. Measured (npm run bench -- lambda-cpu, a child under a
 * CFS quota of the size's CPU share, docs/benchmarks.md): handshake p50 ~200 ms at 128 MB and ~100 ms
 * at 256 MB (20-30× and ~11× an unlimited process: our own CPU), ~9 ms at 512 MB (1.0-1.1×).
 * 512 MB up to three clusters; 1024 MB above, where the sessions are more.
 */
export const SMALL_LOCATION_CLUSTERS = 3;
export const DEFAULT_MEMORY_MB = 512;
export const LARGE_LOCATION_MEMORY_MB = 1024;
export function defaultMemoryMb(clusterCount: number): number {
  return clusterCount <= SMALL_LOCATION_CLUSTERS ? DEFAULT_MEMORY_MB : LARGE_LOCATION_MEMORY_MB;
}
export function functionMemoryMb(config: ProbeConfig, location: LocationConfig): number {
  return config.memoryMb ?? defaultMemoryMb(runtimeConfigFor(config, location).clusters.length);
}

/** The part of the config one location's Lambda needs (baked into its environment). */
export interface LocationRuntimeConfig {
  readonly project: string;
  readonly location: string;
  readonly region: string;
  readonly clusters: readonly ClusterConfig[];
}

export function runtimeConfigFor(config: ProbeConfig, location: LocationConfig): LocationRuntimeConfig {
  return {
    project: config.project,
    location: location.name,
    region: location.region,
    clusters: config.clusters.filter((c) => !location.clusters || location.clusters.includes(c.name)),
  };
}

export function parseRuntimeConfig(text: string | undefined): LocationRuntimeConfig {
  if (!text)
    throw probeError('CONFIG_INVALID', 'KSP_LOCATION_CONFIG is not set: the function was not deployed by the StreamProbe construct', {
      field: 'KSP_LOCATION_CONFIG',
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw probeError('CONFIG_INVALID', 'KSP_LOCATION_CONFIG is not JSON', { field: 'KSP_LOCATION_CONFIG' });
  }
  const o = raw as Partial<LocationRuntimeConfig>;
  if (!o || typeof o.location !== 'string' || typeof o.region !== 'string' || !Array.isArray(o.clusters)) {
    throw probeError('CONFIG_INVALID', 'KSP_LOCATION_CONFIG lacks location, region or clusters', { field: 'KSP_LOCATION_CONFIG' });
  }
  // The clusters by the same rules as the config file (parseClusters), nothing else invented around them.
  const c: Checker = new Checker('KSP_LOCATION_CONFIG');
  const clusters = parseClusters(c, o.clusters);
  unique(c, clusters, 'clusters');
  if (clusters.length === 0) c.fail('clusters', 'is empty: nothing to probe');
  return { project: o.project ?? 'kube-stream-probe', location: o.location, region: o.region, clusters };
}
