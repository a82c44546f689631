/**
 * The deployment configuration: locations (account, region, optional VPC),
 * clusters (endpoint, auth, target) and schedules (holds, keepalives, rate).
 * One parser for the CDK app (and the same cluster rules for the Lambda's
 * runtime config, runtime-config.ts), with errors that name the field
 * (`locations[1].vpc.subnetIds: …`). The rules it shares with the construct are
 * in rules.ts; the shapes in types.ts.
 */
import { Checker, EMAIL, REGION, unique } from './checker.js';
import { parseClusters } from './clusters.js';
import type { EndpointsConfig, LocationConfig, ProbeConfig } from './types.js';
import { ALARM_DEFAULTS, RULES } from './rules.js';
import { sessionStarts } from './location-size.js';
import { longestHold, runnerFor } from './plan.js';
import { parseSchedule } from './schedule-plan.js';

/** The retention periods CloudWatch Logs accepts. */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

function retention(c: Checker, days: number): number {
  if (!(LOG_RETENTION_DAYS as readonly number[]).includes(days))
    c.fail('config.logRetentionDays', `${days} is not one CloudWatch Logs accepts (${LOG_RETENTION_DAYS.join(', ')})`);
  return days;
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
  const alarms = root.alarms === undefined ? {} : c.only(root.alarms, 'alarms', ['evaluationPeriods', 'datapointsToAlarm', 'ticketHoldsWithoutPings']);
  const evaluationPeriods = (alarms.evaluationPeriods ?? ALARM_DEFAULTS.evaluationPeriods) as number;
  c.check('alarms.evaluationPeriods', RULES.evaluationPeriods(evaluationPeriods));
  const datapointsToAlarm = (alarms.datapointsToAlarm ?? ALARM_DEFAULTS.datapointsToAlarm) as number;
  c.check('alarms.datapointsToAlarm', RULES.datapointsToAlarm(datapointsToAlarm, evaluationPeriods));
  // The construct's own schedule parser (schedule-plan.ts): the same plan, the same rules.
  const schedules = c.arr(root, 'schedules', 'config', 1).map((v, i) => parseSchedule(c, v, i, { source, evaluationPeriods }));
  unique(c, schedules, 'schedules');
  for (const s of schedules) {
    // A long hold runs as a task in the location's VPC: every location that runs this schedule needs one.
    locations.forEach((l, k) =>
      c.check(
        `locations[${k}].vpc`,
        l.vpc ? undefined : RULES.taskNeedsVpc(longestHold(s), false)?.replace(/^hold/, `is required: schedule "${s.name}" has a hold of`),
      ),
    );
  }
  const memoryMb = root.memoryMb;
  if (memoryMb !== undefined) c.check('memoryMb', RULES.memoryMb(memoryMb));
  // Every run must start its sessions at an honest pace (location-size.ts), in every location.
  locations.forEach((l, k) => {
    const here = clusters.filter((x) => !l.clusters || l.clusters.includes(x.name));
    schedules.forEach((s) => {
      const problem = RULES.sessionStarts(sessionStarts(here, s), here.length, s.name, runnerFor(s), memoryMb as number | undefined);
      if (problem) c.fail(`locations[${k}].clusters`, problem);
    });
  });
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

export * from './types.js';
export { defaultMemoryMb } from './location-size.js';
export {
  functionMemoryMb,
  locationSessionStarts,
  parseRuntimeConfig,
  runtimeConfigFor,
  type LocationRuntimeConfig,
} from './runtime-config.js';
