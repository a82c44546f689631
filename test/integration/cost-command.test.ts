/**
 * `kube-stream-probe cost`: the monthly estimate per location, as the README's table states it for the examples
 * (so the README cannot drift from config/cost.ts), in a table and as JSON; a bad flag or config is a usage error.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { estimateMonthlyCost } from '../../src/config/cost.js';
import { loadProbeConfig } from '../../src/config/load.js';
import { cli } from '../helpers/cli.js';

describe('kube-stream-probe cost', () => {
  it('prints each location of the config with its total, and JSON with the same figures', async () => {
    const config = loadProbeConfig('infra/examples/multi-location.yaml');
    const table = await cli(['cost', '--config', 'infra/examples/multi-location.yaml']);
    expect(table.code).toBe(0);
    for (const l of config.locations) expect(table.stdout).toMatch(new RegExp(`^${l.name} .*\\$${estimateMonthlyCost(config, l).totalUsd.toFixed(2)}$`, 'm'));
    const json = JSON.parse((await cli(['cost', '--config', 'infra/examples/multi-location.yaml', '-o', 'json'])).stdout);
    expect(json.perMonth.map((e: { location: string; totalUsd: number }) => [e.location, e.totalUsd])).toEqual(
      config.locations.map((l) => [l.name, estimateMonthlyCost(config, l).totalUsd]),
    );
  });

  it("the README's table is what the command computes for the examples", async () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const example of ['single-location', 'private-vpc']) {
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${example}.yaml\``))!;
      const [, , runs, lambda, metrics] = row.split('|').map((c) => c.trim());
      const e = JSON.parse((await cli(['cost', '--config', `infra/examples/${example}.yaml`, '-o', 'json'])).stdout).perMonth[0];
      expect(runs, example).toBe(e.runsPerMonth.toLocaleString('en-US'));
      expect(lambda, example).toBe(`$${e.lambdaUsd.toFixed(2)}`);
      expect(metrics, example).toMatch(new RegExp(`^\\$${e.metricsUsd.toFixed(2)} \\(${e.metrics}`));
      expect(row, example).toMatch(new RegExp(`\\*\\*≈ \\$${Math.round(e.totalUsd)}\\*\\*`));
    }
  });

  it('refuses an unknown output format and a missing config, naming them', async () => {
    expect((await cli(['cost', '--config', 'infra/examples/multi-location.yaml', '-o', 'html'])).stderr).toMatch(/--output "html" is not one of table, json/);
    const missing = await cli(['cost', '--config', 'nope.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml cannot be read \(ENOENT\)/);
  });
});
