/**
 * One Plan (src/config/plan.ts): every plan field, broken the same way, through every entry point — `run`'s flags,
 * `invoke`'s flags, the in-cluster runner's flags (`manifest --runner cronjob`), `serve`'s query, the Lambda event,
 * the deployment YAML and the StreamProbe construct's props — is refused with the same words: the path as that
 * entry point names it, the value, the rule (and the nearest known name for a misspelt one).
 */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { probeRequest } from '../../src/cli/probe-endpoint.js';
import { readConfigDocument } from '../../src/config/load.js';
import { PLAN_NAMES, type PlanField, parsePlan, planEvent, planFlagValues } from '../../src/config/plan.js';
import { Checker } from '../../src/config/checker.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import { errorMessage } from '../../src/errors.js';
import { parseProbeEvent } from '../../src/lambda/event.js';
import type { RunPlan } from '../../src/vocabulary.js';
import { cli } from '../helpers/cli.js';
import { constructWith } from '../helpers/construct-props.js';

type Json = any;
const EXAMPLE = 'infra/examples/single-location.yaml';
const RUNNER = ['manifest', '--runner', 'cronjob', '--runner-image', 'registry.example/ksp:1', '--pushgateway', 'http://pg:9091', '--cluster', 'prod'];
const FLAG = Object.fromEntries(Object.entries(PLAN_NAMES.flags).map(([f, n]) => [f, n])) as Record<PlanField, string>;

const thrown = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return errorMessage(err);
  }
  return '(nothing thrown)';
};

/** The message each entry point gives for `field` set to `good,bad` (flags, query) or [good, bad] (documents). */
async function messages(field: PlanField, good: string, bad: string): Promise<Record<string, string>> {
  const comma = good ? `${good},${bad}` : bad;
  const list = good ? [good, bad] : [bad];
  const flag = FLAG[field];
  const firstLine = (t: string) => t.split('\n')[0]!.replace(/^kube-stream-probe \w+: /, '');
  const out: Record<string, string> = {};
  out.run = firstLine((await cli(['run', flag, comma])).stderr);
  out.invoke = firstLine((await cli(['invoke', '--config', EXAMPLE, flag, comma])).stderr);
  out.runner = firstLine((await cli([...RUNNER, flag, comma])).stderr);
  const url = new URL(`http://exporter/probe?${PLAN_NAMES.query[field]}=${encodeURIComponent(comma)}`);
  const answer = probeRequest(url, {}, { maxHoldSeconds: 600, defaultTimeoutSeconds: 120 } as never);
  out.serve = 'body' in answer ? answer.body.trim() : '(accepted)';
  const value = field === 'transfer' ? bad : list;
  out.event = thrown(() => parseProbeEvent({ [field]: value }));
  out.yaml = thrown(() => {
    const c = readConfigDocument(EXAMPLE) as Json;
    c.schedules[0][field] = value;
    parseProbeConfig(c, 'config.yaml');
  });
  if (field !== 'holds') out.construct = thrown(constructWith((p) => (p.schedules[0][field] = value)));
  return out;
}

/** Where each entry point names the bad item: the flag or parameter alone, or the document path with the item's index. */
function expectedPaths(field: PlanField, index: number): Record<string, string> {
  const item = field === 'transfer' ? '' : `[${index}]`;
  return {
    run: FLAG[field],
    invoke: FLAG[field],
    runner: FLAG[field],
    serve: PLAN_NAMES.query[field],
    event: `event.${field}${item}`,
    yaml: `config.yaml: schedules[0].${field}${item}`,
    construct: `StreamProbe props: schedules[0].${field}${item}`,
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('every plan field, broken the same way, is refused with the same words at every entry point', () => {
  it.each<[PlanField, string, string, string]>([
    ['operations', 'exec', 'shell', '"shell" is not one of exec, portforward, attach'],
    ['keepalives', 'none', 'kubeclt', '"kubeclt" is not one of kubectl, none, sdk: did you mean "kubectl"?'],
    ['holds', '0s', '6x', '"6x" is not a duration (examples: 0s, 65s, 6m, 1h)'],
    ['holds', '0s', '7h', '"7h" is longer than the longest hold any runner accepts (6 h)'],
    ['transfer', '', '8MB', '"8MB" is not a transfer size (8MiB, 64MiB, 512KiB; 0 or off for none; at most 1GiB)'],
    ['holdShapes', 'silent', 'loud', '"loud" is not one of silent, output, input, tty'],
    ['transferShapes', 'echo', 'sideways', '"sideways" is not one of echo, upload, download, small'],
  ])('%s: %s,%s', async (field, good, bad, rule) => {
    const got = await messages(field, good, bad);
    const want = expectedPaths(field, 1);
    for (const [entry, message] of Object.entries(got)) expect(message, entry).toMatch(new RegExp(`^${escape(want[entry]!)} ${escape(rule)}`));
    expect(Object.keys(got)).toEqual(['run', 'invoke', 'runner', 'serve', 'event', 'yaml', ...(field === 'holds' ? [] : ['construct'])]);
  });

  it("attach's holds, which run one after another, are refused when their sum is too long, at every entry point", async () => {
    const rule = `with attach the holds run one after another (the attach sessions share the container's one process), 25200 s in all: longer than the longest hold any runner accepts (6 h)`;
    const got: Record<string, string> = {};
    got.run = (await cli(['run', '--ops', 'exec,attach', '--hold', '4h,3h'])).stderr.split('\n')[0]!.replace(/^kube-stream-probe \w+: /, '');
    got.runner = (await cli([...RUNNER, '--ops', 'exec,attach', '--hold', '4h,3h'])).stderr.split('\n')[0]!.replace(/^kube-stream-probe \w+: /, '');
    const answer = probeRequest(new URL('http://exporter/probe?ops=attach&hold=4h,3h'), {}, { maxHoldSeconds: 30_000, defaultTimeoutSeconds: 120 } as never);
    got.serve = 'body' in answer ? answer.body.trim() : '(accepted)';
    got.event = thrown(() => parseProbeEvent({ operations: ['attach'], holds: ['4h', '3h'] }));
    const where = { ...expectedPaths('holds', 0), event: 'event.holds' };
    for (const [entry, message] of Object.entries(got))
      expect(message, entry).toMatch(new RegExp(`^${escape(where[entry as keyof typeof where])} ${escape(rule)}`));
    // A schedule's holds within the task runner's 2 h each, 3.5 h in all: refused by that runner's limit.
    const scheduled: Record<string, string> = {};
    scheduled.yaml = thrown(() => {
      const c = readConfigDocument(EXAMPLE) as Json;
      Object.assign(c.schedules[0], { operations: ['attach'], holds: ['2h', '90m'] });
      parseProbeConfig(c, 'config.yaml');
    });
    scheduled.construct = thrown(
      constructWith((p) => Object.assign(p.schedules[0], { operations: ['attach'], holds: [Duration.hours(2), Duration.minutes(90)] })),
    );
    const taskRule = `with attach the holds run one after another (the attach sessions share the container's one process), 12600 s in all: 12600 s is longer than the task runner's 7200 s (taskMaxHold)`;
    expect(scheduled.yaml).toMatch(new RegExp(`^${escape(`config.yaml: schedules[0].holds ${taskRule}`)}`));
    expect(scheduled.construct).toMatch(new RegExp(`^${escape(`StreamProbe props: schedules[0].holds ${taskRule}`)}`));
  });

  it('transports: refused in a schedule (the A/B and its alarms need both), checked like the rest elsewhere', async () => {
    const got = await messages('transports', 'spdy', 'http');
    for (const entry of ['run', 'invoke', 'runner', 'serve', 'event'])
      expect(got[entry], entry).toMatch(new RegExp(`^${escape(expectedPaths('transports', 1)[entry]!)} "http" is not one of websocket, spdy`));
    for (const entry of ['yaml', 'construct'])
      expect(got[entry], entry).toMatch(/schedules\[0\]\.transports is not a schedule field: a schedule probes both transports/);
  });

  it('a misspelt name is refused with the nearest known one at every entry point', async () => {
    expect((await cli(['run', '--hlod', '5s'])).stderr).toMatch(/--hlod is not a known flag: did you mean "--hold"\?/);
    expect((await cli([...RUNNER, '--keepalives', 'none'])).stderr).toMatch(/--keepalives is not a known flag: did you mean "--keepalive"\?/);
    const answer = probeRequest(new URL('http://exporter/probe?hold_shap=output'), {}, { maxHoldSeconds: 600, defaultTimeoutSeconds: 120 } as never);
    expect('body' in answer && answer.body).toMatch(/^hold_shap is not a known parameter: did you mean "hold_shape"\?/);
    expect(thrown(() => parseProbeEvent({ hold: ['0s'] }))).toMatch(/^event\.hold is not a known field: did you mean "holds"\?/);
    expect(
      thrown(() => {
        const c = readConfigDocument(EXAMPLE) as Json;
        c.schedules[0].holdShape = ['output'];
        parseProbeConfig(c, 'config.yaml');
      }),
    ).toMatch(/^config\.yaml: schedules\[0\]\.holdShape is not a known field: did you mean "holdShapes"\?/);
    expect(thrown(constructWith((p) => (p.schedules[0].keepalive = ['none'])))).toMatch(
      /^StreamProbe props: schedules\[0\]\.keepalive is not a known field: did you mean "keepalives"\?/,
    );
  });

  it('from JavaScript, a missing list prop is named, not a TypeError', () => {
    expect(thrown(constructWith((p) => delete p.schedules))).toBe('StreamProbe props: schedules is required: a list (got undefined)');
    expect(thrown(constructWith((p) => (p.clusters = 'prod-eu')))).toBe('StreamProbe props: clusters is required: a list (got string)');
  });
});

describe('a plan written by one entry point is read back unchanged by the next', () => {
  const plans: RunPlan[] = [
    { operations: ['exec', 'portforward'], transports: ['websocket', 'spdy'], keepalives: ['kubectl'], holdsSeconds: [0] },
    { operations: ['portforward'], transports: ['spdy'], keepalives: ['none', 'sdk'], holdsSeconds: [0, 65, 360], transferBytes: 8 * 1024 ** 2 },
    {
      operations: ['exec'],
      transports: ['websocket', 'spdy'],
      keepalives: ['kubectl'],
      holdsSeconds: [12.5],
      transferBytes: 1536,
      holdShapes: ['output', 'input'],
      transferShapes: ['upload', 'download', 'small'],
    },
    { operations: ['attach'], transports: ['websocket', 'spdy'], keepalives: ['kubectl', 'none', 'sdk'], holdsSeconds: [0, 65, 360] },
  ];
  it.each(plans.map((p) => [JSON.stringify(p), p] as const))('%s', (_name, plan) => {
    const c = new Checker('test');
    // The schedule's event (infra/schedules.ts) as the Lambda reads it.
    expect(parsePlan({ checker: c, names: PLAN_NAMES.document }, planEvent(plan))).toEqual(plan);
    expect(parseProbeEvent(planEvent(plan))).toMatchObject(plan);
    // The runner's ConfigMap as `run`'s flags read it.
    expect(parsePlan({ checker: c, names: PLAN_NAMES.flags, commaLists: true }, planFlagValues(plan))).toEqual(plan);
  });
});

describe("a cluster's target and names, broken the same way, are refused with the same words by the CLI, the YAML and the construct", () => {
  it.each<[string, string, string, string]>([
    ['namespace', '--namespace', 'Bad_NS', '"Bad_NS" is not a namespace name'],
    ['pod', '--pod', 'Probe_Target', '"Probe_Target" is not a pod name'],
    ['selector', '--selector', 'app', '"app" is not a label selector (k=v,k2=v2)'],
  ])('target.%s', async (field, flag, bad, rule) => {
    for (const command of ['run', 'audit']) expect((await cli([command, flag, bad])).stderr, command).toContain(`${flag} ${rule}`);
    expect(
      thrown(() => {
        const c = readConfigDocument(EXAMPLE) as Json;
        c.clusters[0].target[field] = bad;
        parseProbeConfig(c, 'config.yaml');
      }),
    ).toBe(`config.yaml: clusters[0].target.${field} ${rule}`);
    expect(thrown(constructWith((p) => (p.clusters[0].target[field] = bad)))).toBe(`StreamProbe props: clusters[0].target.${field} ${rule}`);
  });

  it('a location or cluster label: run, serve and the runner by one rule', async () => {
    const rule = `"a b" is not a name (letters, digits, '.', '_', '-'; at most 100)`;
    expect((await cli(['run', '--location', 'a b'])).stderr).toContain(`--location ${rule}`);
    expect((await cli(['run', '--cluster-name', 'a b'])).stderr).toContain(`--cluster-name ${rule}`);
    expect((await cli(['serve', '--location', 'a b'])).stderr).toContain(`--location ${rule}`);
    expect((await cli([...RUNNER.filter((a) => a !== 'prod'), 'a b'])).stderr).toContain(`--cluster ${rule}`);
  });
});
