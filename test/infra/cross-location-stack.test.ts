/**
 * Cross-location paging's plan and resources: which clusters share locations, the home, the wait; the YAML's
 * `crossLocation` and the construct's `forwardPages` refuse what cannot work, naming the field; the stack holds what
 * the cost estimate bills (its key, its two alarms).
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { CrossLocationStack } from '../../infra/cross-location.js';
import { crossLocationPlan, sharedClusters } from '../../src/config/cross-location.js';
import { crossLocationMonthlyCost, PRICES } from '../../src/config/cost.js';
import { loadProbeConfig, readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import { parseNotifyConfig } from '../../src/lambda/notify.js';
import { constructWith } from '../helpers/construct-props.js';

type Json = any;
const multi = () => readConfigDocument('infra/examples/multi-location.yaml') as Json;

describe('the plan', () => {
  it('multi-location.yaml: shared-gitops from both locations, home in the first, a wait of one 5-minute run and 2 min, one account', () => {
    const plan = crossLocationPlan(loadProbeConfig('infra/examples/multi-location.yaml'))!;
    expect(plan.clusters).toEqual({ 'shared-gitops': ['corp-vpc-a', 'eu-central-1-public'] });
    expect(plan.home.name).toBe('corp-vpc-a');
    expect(plan.busArn).toBe('arn:aws:events:us-east-1:222222222222:event-bus/kube-stream-probe-pages');
    expect(plan.waitSeconds).toBe(420);
    expect(plan.accounts).toEqual(['222222222222']);
  });

  it('no shared cluster (single-location.yaml), or `crossLocation: false`: no plan, every location pages for itself', () => {
    expect(crossLocationPlan(loadProbeConfig('infra/examples/single-location.yaml'))).toBeUndefined();
    expect(crossLocationPlan(parseProbeConfig({ ...multi(), crossLocation: false }))).toBeUndefined();
    expect(sharedClusters(parseProbeConfig({ ...multi(), crossLocation: false }))).toEqual({ 'shared-gitops': ['corp-vpc-a', 'eu-central-1-public'] });
  });

  it('`crossLocation.home` moves the aggregator (its region and account make the bus ARN); an unknown home or key is refused by name', () => {
    const plan = crossLocationPlan(parseProbeConfig({ ...multi(), crossLocation: { home: 'eu-central-1-public' } }))!;
    expect(plan.busArn).toBe('arn:aws:events:eu-central-1:222222222222:event-bus/kube-stream-probe-pages');
    expect(() => parseProbeConfig({ ...multi(), crossLocation: { home: 'mars' } }, 'c.yaml')).toThrow(
      /c\.yaml: crossLocation\.home "mars" is not a location in locations\[\] \(corp-vpc-a, eu-central-1-public\)/,
    );
    expect(() => parseProbeConfig({ ...multi(), crossLocation: { hom: 'x' } }, 'c.yaml')).toThrow(
      /crossLocation\.hom is not a known field: did you mean "home"/,
    );
    expect(() => parseProbeConfig({ ...multi(), crossLocation: true }, 'c.yaml')).toThrow(/crossLocation must be an object/);
  });
});

describe("the construct's forwardPages", () => {
  const BUS = 'arn:aws:events:us-east-1:222222222222:event-bus/ksp-pages';
  it.each<[string, (p: Json) => void, RegExp]>([
    [
      'not a bus ARN',
      (p) => (p.forwardPages = { eventBusArn: 'arn:aws:sns:us-east-1:222222222222:t', clusters: ['prod-eu'] }),
      /forwardPages\.eventBusArn .* is not an event bus ARN/,
    ],
    [
      'a cluster it does not probe',
      (p) => (p.forwardPages = { eventBusArn: BUS, clusters: ['payments'] }),
      /forwardPages\.clusters\[0\] "payments" is not one of this probe's clusters/,
    ],
    [
      'alarms off',
      (p) => Object.assign(p, { alarms: false, forwardPages: { eventBusArn: BUS, clusters: ['prod-eu'] } }),
      /forwardPages forwards the pages of alarms, and alarms are off/,
    ],
  ])('%s is refused', (_name, mutate, error) => {
    expect(constructWith(mutate)).toThrow(error);
  });

  it("the notifier's configuration refuses what the construct refuses (one rule, EVENT_BUS_ARN)", () => {
    const config = (forward: string) =>
      JSON.stringify({
        project: 'p',
        location: 'l',
        region: 'us-east-1',
        logGroup: 'g',
        routes: { a: { topicArn: 'arn:aws:sns:us-east-1:222222222222:t', severity: 'PAGE', cluster: 'c', forward } },
      });
    expect(() => parseNotifyConfig(config('arn:aws:sns:us-east-1:222222222222:t'))).toThrow(/routes\.a\.forward must be an event bus ARN/);
    expect(() => constructWith((p) => (p.forwardPages = { eventBusArn: 'arn:aws:sns:us-east-1:222222222222:t', clusters: ['prod-eu'] }))()).toThrow(
      /not an event bus ARN/,
    );
    expect(parseNotifyConfig(config(BUS)).routes.a!.forward).toBe(BUS);
  });
});

describe('the stack', () => {
  it("refuses a configuration its function's 4 KB environment cannot hold, naming the fix", () => {
    const doc = multi();
    doc.clusters = Array.from({ length: 80 }, (_, i) => ({ ...doc.clusters[1], name: `shared-cluster-number-${i}` }));
    doc.locations[1].clusters = doc.clusters.map((c: Json) => c.name);
    const config = parseProbeConfig(doc);
    expect(() => new CrossLocationStack(new App(), 'X', { config, plan: crossLocationPlan(config)! })).toThrow(
      /plan\.clusters are 80 clusters shared by several locations: about \d+ bytes .* turn cross-location paging off \(crossLocation: false\)/,
    );
  });

  it('holds the key and alarms the cost estimate bills; the bus, its rule for our events, the table, the delay queue, one function (no reserved concurrency: concurrent decisions are safe)', () => {
    const config = loadProbeConfig('infra/examples/multi-location.yaml');
    const t = Template.fromStack(buildApp(new App(), 'infra/examples/multi-location.yaml').crossLocation!);
    const cost = crossLocationMonthlyCost(config)!;
    t.resourceCountIs('AWS::KMS::Key', 1);
    t.resourceCountIs('AWS::CloudWatch::Alarm', cost.alarms);
    expect(cost.totalUsd).toBeCloseTo(PRICES.kmsKeyPerMonth + cost.alarms * PRICES.alarmPerMonth);
    t.hasResourceProperties('AWS::Events::EventBus', { Name: 'kube-stream-probe-pages' });
    t.hasResourceProperties('AWS::Events::Rule', { EventPattern: { source: ['kube-stream-probe'], 'detail-type': ['Location page state change'] } });
    t.resourceCountIs('AWS::DynamoDB::Table', 1);
    t.resourceCountIs('AWS::SQS::Queue', 1);
    t.resourceCountIs('AWS::Lambda::Function', 1);
    t.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.aggregate', ReservedConcurrentExecutions: Match.absent() });
    // multi-location.yaml has no alarmEmail: the topic is there for the subscriptions its owners add.
    t.resourceCountIs('AWS::SNS::Topic', 1);
  });
});
