/**
 * One rule in one place (src/config/rules.ts), and one list of broken values run through both entry points: the
 * deployment YAML (parseProbeConfig) and the StreamProbe construct's props. Each row breaks the same rule in
 * each, and both must refuse it with the same words, naming the field.
 */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import { constructWith } from '../helpers/construct-props.js';

type Json = any;

/** `n` clusters like `first`, named c0, c1, … */
const manyClusters = (first: Json, n: number) => Array.from({ length: n }, (_, i) => ({ ...first, name: `c${i}` }));

const yaml = (mutate: (c: Json) => void) => () => {
  const c = readConfigDocument('infra/examples/single-location.yaml') as Json;
  mutate(c);
  parseProbeConfig(c);
};

const construct = constructWith;

describe('each rule refuses the same thing in the YAML and in the construct props, with the same words', () => {
  it.each<[string, (c: Json) => void, (p: Json) => void, RegExp]>([
    [
      'a cluster name',
      (c) => (c.clusters[0].name = 'Prod_EU'),
      (p) => (p.clusters[0].name = 'Prod_EU'),
      /clusters\[0\]\.name "Prod_EU" must be lower-case letters, digits and "-" \(at most 40\)/,
    ],
    ['the project name', (c) => (c.project = 'KSP'), (p) => (p.project = 'KSP'), /project "KSP" must be lower-case letters, digits and "-"/],
    [
      'a schedule name',
      (c) => (c.schedules[0].name = 'Short'),
      (p) => (p.schedules[0].name = 'Short'),
      /schedules\[0\]\.name "Short" must be lower-case letters/,
    ],
    [
      'a transfer size that is not binary, or too large',
      (c) => (c.schedules[0].transfer = '8MB'),
      (p) => (p.schedules[0].transfer = '8MB'),
      /schedules\[0\]\.transfer "8MB" is not a transfer size \(8MiB, 64MiB, 512KiB; 0 or off for none; at most 1GiB\)/,
    ],
    [
      'a transfer that cannot finish in one Lambda run',
      (c) => (c.schedules[0].transfer = '512MiB'),
      (p) => (p.schedules[0].transfer = '512MiB'),
      /schedules\[0\]\.transfer "512MiB" cannot finish in one Lambda run: 4 transfers, one after another, may take up to \d+ s at the 256 KiB\/s floor, and a run may last 900 s; use at most 41MiB/,
    ],
    [
      'a transfer over 1GiB',
      (c) => (c.schedules[0].transfer = '2GiB'),
      (p) => (p.schedules[0].transfer = '2GiB'),
      /schedules\[0\]\.transfer "2GiB" is not a transfer size/,
    ],
    ['a name used twice', (c) => (c.schedules[1].name = 'short'), (p) => (p.schedules[1].name = 'short'), /schedules\[1\]\.name "short" is used twice/],
    [
      'an endpoint that is not https',
      (c) => (c.clusters[0].endpoint = 'http://k8s:8080'),
      (p) => (p.clusters[0].endpoint = 'http://k8s:8080'),
      /clusters\[0\]\.endpoint "http:\/\/k8s:8080" must be an https:\/\/ URL/,
    ],
    // The construct once checked 4 cluster rules and the function 12: these five deployed, then every run failed.
    [
      'a target namespace',
      (c) => (c.clusters[0].target.namespace = 'Bad_NS'),
      (p) => (p.clusters[0].target.namespace = 'Bad_NS'),
      /clusters\[0\]\.target\.namespace "Bad_NS" is not a namespace name/,
    ],
    [
      'an EKS cluster name',
      (c) => (c.clusters[0].auth = { type: 'eks', clusterName: 'prod eu' }),
      (p) => (p.clusters[0].auth = { type: 'eks', clusterName: 'prod eu' }),
      /clusters\[0\]\.auth\.clusterName "prod eu" is not an EKS cluster name/,
    ],
    [
      'caData that is not base64',
      (c) => (c.clusters[0].caData = '-----BEGIN CERTIFICATE-----'),
      (p) => (p.clusters[0].caData = '-----BEGIN CERTIFICATE-----'),
      /clusters\[0\]\.caData must be base64/,
    ],
    [
      'caData that is base64 of no certificate (kubectl refuses such a CA: test/interop/kubeconfig-pem.test.ts)',
      (c) => (c.clusters[0].caData = 'QQ=='),
      (p) => (p.clusters[0].caData = 'QQ=='),
      /clusters\[0\]\.caData holds no PEM certificate that parses/,
    ],
    [
      'a selector without a value',
      (c) => (c.clusters[0].target.selector = 'app'),
      (p) => (p.clusters[0].target.selector = 'app'),
      /clusters\[0\]\.target\.selector "app" is not a label selector \(k=v,k2=v2\)/,
    ],
    [
      'a pod name',
      (c) => (c.clusters[0].target.pod = 'Probe_Target'),
      (p) => (p.clusters[0].target.pod = 'Probe_Target'),
      /clusters\[0\]\.target\.pod "Probe_Target" is not a pod name/,
    ],
    [
      'a misspelt target field',
      (c) => (c.clusters[0].target.namepsace = 'x'),
      (p) => (p.clusters[0].target.namepsace = 'x'),
      /clusters\[0\]\.target\.namepsace is not a known field: did you mean "namespace"\?/,
    ],
    [
      'a port out of range',
      (c) => (c.clusters[0].target.port = 70000),
      (p) => (p.clusters[0].target.port = 70000),
      /clusters\[0\]\.target\.port 70000 is not a TCP port \(1-65535\)/,
    ],
    [
      'a function name over 64 characters',
      (c) => ((c.project = 'a-rather-long-project-name-xyz'), (c.locations[0].name = 'eu-west-1-public-and-a-very-long-name-x')),
      (p) => ((p.project = 'a-rather-long-project-name-xyz'), (p.locationName = 'eu-west-1-public-and-a-very-long-name-x')),
      /"eu-west-1-public-and-a-very-long-name-x" makes the function name a-rather-long-project-name-xyz-eu-west-1-public-and-a-very-long-name-x 70 characters long; Lambda allows 64/,
    ],
    [
      'an access entry for a cluster in another region',
      (c) => (c.clusters[0].auth = { type: 'eks', clusterName: 'prod-eu', region: 'us-east-2', accessEntryGroup: 'kube-stream-probe' }),
      (p) => (p.clusters[0].auth = { type: 'eks', clusterName: 'prod-eu', region: 'us-east-2', accessEntryGroup: 'kube-stream-probe' }),
      /clusters\[0\]\.auth\.accessEntryGroup needs the cluster in the location's region \(eu-west-1\), not us-east-2/,
    ],
    [
      'evaluationPeriods',
      (c) => (c.alarms = { evaluationPeriods: 0 }),
      (p) => (p.alarms = { evaluationPeriods: 0 }),
      /alarms\.evaluationPeriods 0 must be a whole number from 1 to 100/,
    ],
    [
      'datapointsToAlarm above evaluationPeriods',
      (c) => (c.alarms = { evaluationPeriods: 2, datapointsToAlarm: 3 }),
      (p) => (p.alarms = { evaluationPeriods: 2, datapointsToAlarm: 3 }),
      /alarms\.datapointsToAlarm 3 must be a whole number from 1 to evaluationPeriods \(2\)/,
    ],
    [
      'an SLO objective of 100 % (no budget to burn)',
      (c) => (c.alarms = { sloObjective: 1 }),
      (p) => (p.alarms = { sloObjective: 1 }),
      /alarms\.sloObjective 1 must be a number between 0 and 1 \(0\.999 is 99\.9 %\)/,
    ],
    ['memory', (c) => (c.memoryMb = 64), (p) => (p.memorySize = 64), /(memoryMb|memorySize) 64 must be 128-10240 MB/],
    [
      'more session starts than one function paces (a location too large: split it)',
      (c) => (c.clusters = manyClusters(c.clusters[0], 130)),
      (p) => (p.clusters = manyClusters(p.clusters[0], 130)),
      /schedule "short" starts \d+ sessions per run across 130 clusters; one function paces at most 1000 within its 20 s start window even at a whole vCPU.*split these clusters across two locations/,
    ],
    [
      'an explicit memory too small to pace the starts',
      (c) => ((c.clusters = manyClusters(c.clusters[0], 40)), (c.memoryMb = 512)),
      (p) => ((p.clusters = manyClusters(p.clusters[0], 40)), (p.memorySize = 512)),
      /512 MB paces at most 289 session starts within the 20 s start window, but schedule "short" starts \d+ sessions per run across 40 clusters: use at least 1024 MB or leave it unset/,
    ],
    [
      'a schedule CloudWatch cannot alarm on',
      (c) => (c.schedules[0].expression = 'cron(0 9 ? * MON-FRI *)'),
      (p) => (p.schedules[0].expression = 'cron(0 9 ? * MON-FRI *)'),
      /schedules\[0\]\.expression "cron\(0 9 \? \* MON-FRI \*\)" .*\(alarms\.evaluationPeriods is 3\)/,
    ],
    [
      'a scheduled hold that is not whole seconds (the YAML took it, the construct refused it)',
      (c) => (c.schedules[0].holds = ['0s', '1500ms']),
      (p) => (p.schedules[0].holds = [Duration.seconds(0), Duration.millis(1500)]),
      /schedules\[0\]\.holds\[1\] 1\.5 s is not a whole number of seconds/,
    ],
    [
      'a hold beyond the task runner',
      (c) => (c.schedules[1].holds = ['3h']),
      (p) => (p.schedules[1].holds = [Duration.hours(3)]),
      /schedules\[1\]\.holds\[0\] 10800 s is longer than the task runner's 7200 s/,
    ],
    [
      'task runs that would overlap',
      (c) => ((c.schedules[1].holds = ['60m']), (c.locations[0].vpc = { vpcId: 'vpc-0a1b2c3d4e5f60718', subnetIds: ['subnet-0a1b2c3d4e5f60718'] })),
      (p) => ((p.schedules[1].holds = [Duration.minutes(60)]), (p.vpc = { vpcId: 'x' }), (p.subnets = [{ subnetId: 'subnet-0a1b2c3d4e5f60718' }])),
      /schedules\[1\]\.expression "rate\(1 hour\)" starts a run every 3600 s, but a run holding 3600 s lasts up to 3680 s: runs would overlap/,
    ],
  ])('%s', (_name, breakYaml, breakProps, message) => {
    expect(yaml(breakYaml)).toThrow(message);
    expect(construct(breakProps)).toThrow(message);
  });

  it('a long hold without a VPC: the YAML names the location, the construct the schedule, with the same rule', () => {
    expect(yaml((c) => (c.schedules[1].holds = ['20m']))).toThrow(
      /locations\[0\]\.vpc is required: schedule "long" has a hold of 1200 s is longer than a Lambda run allows \(820 s\)/,
    );
    expect(construct((p) => (p.schedules[1].holds = [Duration.minutes(20)]))).toThrow(
      /schedules\[1\]\.holds hold 1200 s is longer than a Lambda run allows \(820 s\)/,
    );
  });
});
