/**
 * The real-account integration test (test/integ/integ.location.ts) cannot run
 * here (no credentials, no cluster): CI synthesizes it and checks its
 * snapshot, so it stays buildable and its assertions stay what they say.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildIntegApp } from '../integ/integ.location.js';

const scrub = (t: unknown) =>
  JSON.stringify(t, null, 1)
    .replace(/[0-9a-f]{64}(\.zip)?/g, 'ASSET-HASH$1')
    .replace(/"aws:asset:path": "[^"]*"/g, '"aws:asset:path": "ASSET"')
    .replace(/"salt": "\d+"/g, '"salt": "SALT"');

describe('the real-account integration test', () => {
  it('synthesizes the location and its assertions: one synchronous run, the metrics listed, a publish to the ticket topic', () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'ksp-integ-')) });
    const { stack } = buildIntegApp(app, 'infra/examples/single-location.yaml');
    const assembly = app.synth();
    const assertStack = app.node.findAll().find((c): c is Stack => Stack.isStack(c) && c !== stack)!;
    const asserts = Template.fromStack(assertStack).toJSON();
    const calls = Object.values(asserts.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>)
      .filter((r) => r.Type.startsWith('Custom::DeployAssert'))
      .map((r) => `${r.Properties.service ?? 'Lambda'}.${r.Properties.api ?? 'invoke'}`)
      .sort();
    expect(calls).toEqual(expect.arrayContaining(['CloudWatch.listMetrics', 'SNS.publish']));
    expect(JSON.stringify(asserts)).toMatch(/ok\W{0,12}true/); // the run's reply says ok
    expect(assembly.stacks.map((s) => s.stackName).sort()).toEqual(['ksp-integ-eu-west-1-public', 'ksp-integ-eu-west-1-public-assertions']);
    expect(scrub(Template.fromStack(stack).toJSON())).toMatchSnapshot('location');
    expect(scrub(asserts)).toMatchSnapshot('assertions');
  });
});
