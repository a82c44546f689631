/**
 * The deployment configuration: locations (account, region, optional VPC),
 * clusters (endpoint, auth, target) and schedules (holds, keepalives, rate).
 * One parser for the CDK app (and the same cluster rules for the Lambda's
 * runtime config, runtime-config.ts), with errors that name the field
 * (`locations[1].vpc.subnetIds: …`). The rules it shares with the construct are
 * in rules.ts; the shapes in types.ts.
 */
import { Checker, EMAIL, unique } from './checker.js';
import { parseClusters } from './clusters.js';
import type { EndpointsConfig, LocationConfig, ProbeConfig, VpcPlacement } from './types.js';
import { ALARM_DEFAULTS, NAME_RULES, RULES } from './rules.js';
import { sessionStarts } from './location-size.js';
import { holdSpan, runnerFor } from './plan.js';
import { parseSchedule } from './schedule-plan.js';

/** The retention periods CloudWatch Logs accepts. */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

function retention(c: Checker, days: number): number {
  if (!(LOG_RETENTION_DAYS as readonly number[]).includes(days))
    c.fail('config.logRetentionDays', `${days} is not one CloudWatch Logs accepts (${LOG_RETENTION_DAYS.join(', ')})`);
  return days;
}

const ROOT_FIELDS = ['project', 'alarmEmail', 'ticketEmail', 'alarms', 'memoryMb', 'logRetentionDays', 'locations', 'clusters', 'schedules', 'crossLocation'];

export function parseProbeConfig(raw: unknown, source = 'config'): ProbeConfig {
  // Explicitly typed so TypeScript treats c.fail() (never) as the end of a branch.
  const c: Checker = new Checker(source);
  const root = c.only(raw, 'the document', ROOT_FIELDS);
  const clusters = parseClusters(c, c.arr(root, 'clusters', 'config', 1));
  unique(c, clusters, 'clusters');
  const clusterNames = new Set(clusters.map((x) => x.name));
  const locations = c.arr(root, 'locations', 'config', 1).map((v, i) => parseLocation(c, v, `locations[${i}]`, clusterNames));
  unique(c, locations, 'locations');
  const project = c.optStr(root, 'project', 'config') ?? 'kube-stream-probe';
  c.check('project', RULES.name(project));
  const alarms = parseAlarms(c, root.alarms);
  // The construct's own schedule parser (schedule-plan.ts): the same plan, the same rules.
  const schedules = c.arr(root, 'schedules', 'config', 1).map((v, i) => parseSchedule(c, v, i, { source, evaluationPeriods: alarms.evaluationPeriods }));
  unique(c, schedules, 'schedules');
  const memoryMb = root.memoryMb;
  if (memoryMb !== undefined) c.check('memoryMb', RULES.memoryMb(memoryMb));
  const config: ProbeConfig = {
    project,
    alarmEmail: c.optStr(root, 'alarmEmail', 'config', EMAIL, 'is not an email address'),
    ticketEmail: c.optStr(root, 'ticketEmail', 'config', EMAIL, 'is not an email address'),
    alarms,
    memoryMb: memoryMb as number | undefined,
    logRetentionDays: retention(c, c.int(root, 'logRetentionDays', 'config', 1, 3653, 30)),
    locations,
    clusters,
    schedules,
    ...(root.crossLocation === undefined ? {} : { crossLocation: parseCrossLocation(c, root.crossLocation, locations) }),
  };
  checkLocations(c, config);
  return config;
}

/** `crossLocation`: false, or `{ home: <a location's name> }` (the aggregator's account and region). */
function parseCrossLocation(c: Checker, v: unknown, locations: readonly LocationConfig[]): false | { home?: string } {
  if (v === false) return false;
  const o = c.only(v, 'crossLocation', ['home']);
  const home = c.optStr(o, 'home', 'crossLocation');
  if (home !== undefined && !locations.some((l) => l.name === home))
    c.fail('crossLocation.home', `"${home}" is not a location in locations[] (${locations.map((l) => l.name).join(', ')})`);
  return home === undefined ? {} : { home };
}

/** `locations[i]`: its account and region, its VPC, the clusters it probes (names from clusters[]). */
function parseLocation(c: Checker, v: unknown, f: string, clusterNames: ReadonlySet<string>): LocationConfig {
  const o = c.only(v, f, ['name', 'account', 'region', 'vpc', 'clusters']);
  const only = o.clusters === undefined ? undefined : c.strings(o, 'clusters', f, 1);
  only?.forEach((n, j) => clusterNames.has(n) || c.fail(`${f}.clusters[${j}]`, `"${n}" is not a cluster in clusters[]`));
  return {
    name: c.name(o, f),
    account: c.str(o, 'account', f, /^\d{12}$/, 'must be a 12-digit AWS account id'),
    region: c.ruled(o, 'region', f, NAME_RULES.region),
    vpc: o.vpc === undefined ? undefined : parseVpc(c, o.vpc, `${f}.vpc`),
    clusters: only,
  };
}

const SG = /^sg-[0-9a-f]{8,17}$/;

/** A location's VPC placement and how its AWS API endpoints are reached. */
function parseVpc(c: Checker, v: unknown, f: string): VpcPlacement {
  const vo = c.only(v, f, ['vpcId', 'subnetIds', 'securityGroupIds', 'availabilityZones', 'apiServerCidrs', 'endpoints']);
  const list = (key: string, pattern: RegExp, rule: string) => (vo[key] === undefined ? undefined : c.strings(vo, key, f, 1, pattern, rule));
  return {
    vpcId: c.str(vo, 'vpcId', f, /^vpc-[0-9a-f]{8,17}$/, 'is not a VPC id'),
    subnetIds: c.strings(vo, 'subnetIds', f, 1, /^subnet-[0-9a-f]{8,17}$/, 'is not a subnet id'),
    securityGroupIds: list('securityGroupIds', SG, 'is not a security group id'),
    availabilityZones: list('availabilityZones', /^[a-z]{2}(-[a-z]+)+-\d[a-z]$/, 'is not an availability zone'),
    apiServerCidrs: list('apiServerCidrs', /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, 'is not an IPv4 CIDR'),
    endpoints: parseEndpoints(c, vo.endpoints, `${f}.endpoints`),
  };
}

function parseEndpoints(c: Checker, v: unknown, f: string): EndpointsConfig {
  if (v === undefined) return { mode: 'none' };
  const eo = c.only(v, f, ['mode', 'securityGroupIds', 'routeTableIds', 's3PrefixListId']);
  const s3PrefixListId = c.optStr(eo, 's3PrefixListId', f, /^pl-[0-9a-f]{8,17}$/, 'is not a prefix list id (pl-…)');
  if (eo.mode === 'none') return { mode: 'none' };
  if (eo.mode === 'create') {
    const routeTableIds = eo.routeTableIds === undefined ? undefined : c.strings(eo, 'routeTableIds', f, 1, /^rtb-[0-9a-f]{8,17}$/, 'is not a route table id');
    return { mode: 'create', routeTableIds, s3PrefixListId };
  }
  if (eo.mode === 'existing')
    return { mode: 'existing', securityGroupIds: c.strings(eo, 'securityGroupIds', f, 1, SG, 'is not a security group id'), s3PrefixListId };
  c.fail(`${f}.mode`, 'must be "create", "existing" or "none"');
}

function parseAlarms(c: Checker, v: unknown): ProbeConfig['alarms'] {
  const alarms = v === undefined ? {} : c.only(v, 'alarms', ['evaluationPeriods', 'datapointsToAlarm', 'ticketHoldsWithoutPings', 'sloObjective']);
  const evaluationPeriods = (alarms.evaluationPeriods ?? ALARM_DEFAULTS.evaluationPeriods) as number;
  c.check('alarms.evaluationPeriods', RULES.evaluationPeriods(evaluationPeriods));
  const datapointsToAlarm = (alarms.datapointsToAlarm ?? ALARM_DEFAULTS.datapointsToAlarm) as number;
  c.check('alarms.datapointsToAlarm', RULES.datapointsToAlarm(datapointsToAlarm, evaluationPeriods));
  const sloObjective = (alarms.sloObjective ?? ALARM_DEFAULTS.sloObjective) as number;
  c.check('alarms.sloObjective', RULES.sloObjective(sloObjective));
  return { evaluationPeriods, datapointsToAlarm, ticketHoldsWithoutPings: c.bool(alarms, 'ticketHoldsWithoutPings', 'alarms', false), sloObjective };
}

/**
 * What each location must meet with its clusters and schedules: a function name Lambda allows, access entries only
 * in the cluster's region, a VPC for a schedule's long holds (they run as a task), and an honest start pace
 * (location-size.ts) for every schedule.
 */
function checkLocations(c: Checker, config: ProbeConfig): void {
  const { clusters, schedules, locations, memoryMb } = config;
  locations.forEach((l, k) => {
    c.check(`locations[${k}].name`, RULES.functionName(config.project, l.name));
    const here = clusters.filter((x) => !l.clusters || l.clusters.includes(x.name));
    for (const cl of here)
      if (cl.auth.type === 'eks' && cl.auth.accessEntryGroup)
        c.check(`clusters[${clusters.indexOf(cl)}].auth.accessEntryGroup`, RULES.accessEntryRegion(cl.auth.region, l.region));
    for (const s of schedules) {
      if (!l.vpc) c.check(`locations[${k}].vpc`, RULES.taskNeedsVpc(holdSpan(s), false)?.replace(/^hold/, `is required: schedule "${s.name}" has a hold of`));
      const problem = RULES.sessionStarts(sessionStarts(here, s), here.length, s.name, runnerFor(s), memoryMb);
      if (problem) c.fail(`locations[${k}].clusters`, problem);
    }
  });
}

export * from './types.js';
export { defaultMemoryMb } from './location-size.js';
export {
  functionMemoryMb,
  locationSessionStarts,
  parseRuntimeConfig,
  runtimeConfigFor,
  type LocationRuntimeConfig,
} from './runtime-config.js';
