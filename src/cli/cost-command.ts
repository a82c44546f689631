/**
 * `kube-stream-probe cost`: what each location of a deployment config costs a month, before it is deployed, by
 * the same counts the construct synthesizes (config/cost.ts: the metrics and alarms are checked against the
 * templates in test/infra): Lambda (or the long-hold task), custom metrics, alarms, the dashboard, endpoints and
 * the topics' key, transfers through a NAT gateway, the rest. AWS list prices for us-east-1 (cost.ts PRICES).
 */
import { crossLocationMonthlyCost, estimateMonthlyCost, type CostEstimate } from '../config/cost.js';
import { probeError } from '../errors.js';
import { loadProbeConfig } from '../config/load.js';
import { table } from '../text.js';
import { parse } from './args.js';
import { defaultConfigPath } from './invoke-command.js';
import type { CommandIO } from './io.js';

export const COST_HELP = `Usage: kube-stream-probe cost [--config FILE] [-o table|json]

What each location of the deployment config costs a month, in USD at AWS list prices (us-east-1, arm64 Lambda;
free tiers ignored), from the same counts of metrics and alarms the stack synthesizes.

  --config FILE         the deployment config (default: cdk.json's context.config)
  -o, --output FORMAT   table | json (default table)
  -h, --help            this help
`;

const COLUMNS: readonly [string, (c: CostEstimate) => string][] = [
  ['runs/month', (c) => String(c.runsPerMonth)],
  ['compute', (c) => usd(c.lambdaUsd)],
  ['metrics', (c) => `${usd(c.metricsUsd)} (${c.metrics})`],
  ['alarms', (c) => `${usd(c.alarmsUsd)} (${c.alarms})`],
  ['dashboard', (c) => usd(c.dashboardUsd)],
  ['network', (c) => `${usd(c.networkUsd)}${c.interfaceEndpoints ? ` (${c.interfaceEndpoints} endpoint-zones)` : ''}`],
  ['transfers', (c) => `${usd(c.transferUsd)}${c.transferGbPerMonth ? ` (${c.transferGbPerMonth} GB)` : ''}`],
  ['other', (c) => usd(c.otherUsd)],
  ['total', (c) => usd(c.totalUsd)],
];

const usd = (n: number) => `$${n.toFixed(2)}`;

export async function costCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parse(argv, { config: { type: 'string' }, output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(COST_HELP);
    return 0;
  }
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') throw probeError('USAGE', `--output "${output}" is not one of table, json`, { field: 'output' });
  const config = loadProbeConfig(values.config ?? defaultConfigPath());
  const estimates = config.locations.map((l) => ({ location: l.name, ...estimateMonthlyCost(config, l) }));
  const cross = crossLocationMonthlyCost(config);
  if (output === 'json') {
    io.out(`${JSON.stringify({ currency: 'USD', perMonth: estimates, ...(cross ? { crossLocation: cross } : {}) }, null, 2)}\n`);
    return 0;
  }
  const rows = estimates.map((e) => [e.location, ...COLUMNS.map(([, cell]) => cell(e))]);
  const total = estimates.reduce((n, e) => n + e.totalUsd, 0) + (cross?.totalUsd ?? 0);
  const crossLine = cross
    ? `\ncross-location paging (in ${cross.home}): ${usd(cross.totalUsd)} (its topic's KMS key and ${cross.alarms} alarms; its function, table and queue bill per page state change).`
    : '';
  io.out(
    `${table(['location', ...COLUMNS.map(([h]) => h)], rows)}\n${crossLine}\n${estimates.length} location${estimates.length === 1 ? '' : 's'}${cross ? ' and cross-location paging' : ''}: ${usd(total)} a month at us-east-1 list prices (free tiers ignored).\n`,
  );
  return 0;
}
