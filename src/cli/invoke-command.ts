/**
 * `kube-stream-probe invoke`: invokes the deployed probe in every configured
 * location at once (Lambda Invoke, RequestResponse) with optional overrides,
 * and prints one combined verdict table (locations × verdicts).
 */
import { SecretRedactor } from '../kube/secrets.js';
import { emit, outputFormat, renderStructured } from './output.js';
import { readFileSync } from 'node:fs';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { loadProbeConfig } from '../config/load.js';
import { errorMessage, probeError } from '../errors.js';
import type { LocationSummary } from '../lambda/run-location.js';
import { invokeTask, type TaskInvokeClients } from '../aws/task-invoke.js';
import { LAMBDA_MAX_HOLD_SECONDS, taskRunSeconds } from '../config/lambda-limits.js';
import { holdSpan, planEvent, planTransferMs, runnerFor } from '../config/plan.js';
import { MATRIX_FLAGS, list, oneOf, parse, planFromFlags } from './args.js';
import { EXIT } from './exit-codes.js';
import { KUBECTL_CLIENTS } from '../probe/kubectl-model.js';
import { KUBECTL_LEGEND, kubectlCells, table } from './format.js';
import { exitCodeFor } from './run-command.js';
import type { CommandIO } from './io.js';

export const INVOKE_HELP = `Usage: kube-stream-probe invoke [flags]

Invokes the deployed probe Lambda of every location in the deployment
configuration at once and prints one table of verdicts. The equivalent for
one location is:
  aws lambda invoke --function-name <project>-<location> --region <region> \\
    --cli-read-timeout 0 --cli-binary-format raw-in-base64-out --payload '{"holds":["0s","65s"]}' out.json

Flags:
  --config PATH        deployment configuration (default: cdk.json's context.config)
  --locations LIST     only these locations
  --clusters LIST      only these clusters
  --ops LIST           exec,portforward,attach
  --transports LIST    websocket,spdy
  --hold LIST          holds, e.g. 0s,65s; above ${LAMBDA_MAX_HOLD_SECONDS}s the location's ECS task runs them
  --runner R           auto | lambda | task (default auto: the task when a hold is longer than a Lambda run);
                       a task is started, waited for (progress on stderr) and read from its log
  --keepalive LIST     kubectl,none
  --hold-shape LIST    silent,output,input,tty: what moves during exec holds (run --help)
  --transfer-shape LIST echo,upload,download,small: how the transfer moves (run --help)
  --transfer SIZE      also stream SIZE bytes through each operation × transport (8MiB; run --help)
  -o, --output FORMAT  table | json | html (html: every location's reports in one self-contained file)
  --out FILE           write the report to FILE instead of stdout
  -h, --help           this help

Uses the standard AWS credential chain; locations in other accounts need
credentials valid there. Exit codes as for run, and 1 when an invocation failed.
`;

export interface InvokeDeps {
  /** One client per region; injected by tests. */
  readonly lambdaFor: (region: string) => Pick<LambdaClient, 'send'>;
  readonly tasksFor?: (region: string) => TaskInvokeClients | Promise<TaskInvokeClients>;
  /** How often a task is asked about, ms. */
  readonly taskPollMs?: number;
}

/** The deployment config a command reads: --config, else cdk.json's context.config (as `cdk deploy` does). */
export function defaultConfigPath(): string {
  try {
    const cdk = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context?: { config?: string } };
    if (cdk.context?.config) return cdk.context.config;
  } catch {
    /* no cdk.json here */
  }
  throw probeError('USAGE', 'no --config given and no cdk.json with context.config in this directory', { field: 'config' });
}

export async function invokeCommand(argv: readonly string[], io: CommandIO, deps?: InvokeDeps): Promise<number> {
  const { values } = parse(argv, {
    config: { type: 'string' },
    locations: { type: 'string' },
    clusters: { type: 'string' },
    ...MATRIX_FLAGS,
    runner: { type: 'string' },
    output: { type: 'string', short: 'o' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(INVOKE_HELP);
    return 0;
  }
  const output = outputFormat(values.output);
  const config = loadProbeConfig(values.config ?? defaultConfigPath());
  const names = config.locations.map((l) => l.name);
  const locations = values.locations
    ? list('locations', values.locations, names, names).map((n) => config.locations.find((l) => l.name === n)!)
    : config.locations;
  // Checked here by the function's own parser (config/plan.ts), so a typo fails before any invocation.
  const plan = planFromFlags(values);
  const event: Record<string, unknown> = { ...(values.clusters ? { clusters: values.clusters.split(',') } : {}), ...planEvent(plan) };
  const runner = oneOf('runner', values.runner, ['auto', 'lambda', 'task'] as const, 'auto');
  const useTask = runner === 'task' || (runner === 'auto' && runnerFor(plan) === 'task');
  // One ECS and one Logs client per location, loaded only when a task runs (a wait polls them for an hour).
  const tasksFor =
    deps?.tasksFor ??
    (async (region: string): Promise<TaskInvokeClients> => {
      const [{ ECSClient }, { CloudWatchLogsClient }] = await Promise.all([import('@aws-sdk/client-ecs'), import('@aws-sdk/client-cloudwatch-logs')]);
      return { ecs: new ECSClient({ region }), logs: new CloudWatchLogsClient({ region }) };
    });
  const lambdaFor = deps?.lambdaFor ?? ((region: string) => new LambdaClient({ region }));
  const outcomes = await Promise.all(
    locations.map(async (loc): Promise<{ location: string; summary?: LocationSummary; error?: string }> => {
      const functionName = `${config.project}-${loc.name}`;
      if (useTask) {
        try {
          const summary = await invokeTask(await tasksFor(loc.region), {
            project: config.project,
            location: loc.name,
            event,
            taskSeconds: taskRunSeconds(holdSpan(plan), planTransferMs(plan)),
            pollMs: deps?.taskPollMs,
            progress: (t) => io.err(`${t}\n`),
            signal: io.signal,
          });
          return summary.ok ? { location: loc.name, summary } : { location: loc.name, summary, error: `${summary.error?.code}: ${summary.error?.message}` };
        } catch (err) {
          return { location: loc.name, error: `the ${loc.name} task in ${loc.region} failed: ${errorMessage(err)}` };
        }
      }
      try {
        const out = await lambdaFor(loc.region).send(
          new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: Buffer.from(JSON.stringify(event)) }),
        );
        const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
        if (out.FunctionError) return { location: loc.name, error: `${functionName} failed (${out.FunctionError}): ${text.slice(0, 300)}` };
        const summary = JSON.parse(text) as LocationSummary;
        if (!summary.ok) return { location: loc.name, summary, error: `${summary.error?.code}: ${summary.error?.message}` };
        return { location: loc.name, summary };
      } catch (err) {
        return { location: loc.name, error: `invoking ${functionName} in ${loc.region} failed: ${errorMessage(err)}` };
      }
    }),
  );
  if (output !== 'table') {
    const entries = outcomes.flatMap((o) => (o.summary?.reports ?? []).map((report) => ({ path: o.location, report })));
    emit(io, renderStructured(output, entries, outcomes, new SecretRedactor()), values.out);
  } else {
    const rows = outcomes.flatMap((o) => [
      ...(o.summary?.reports ?? []).flatMap((r) =>
        r.verdicts.map((v) => [o.location, r.cluster, v.operation, v.keepalive, `${v.holdSeconds}s`, v.spdy, v.websocket, ...kubectlCells(v), v.verdict]),
      ),
      ...(o.summary?.refused ?? []).map((x) => [
        o.location,
        '-',
        '-',
        '-',
        `${x.holdSeconds}s`,
        '-',
        '-',
        ...KUBECTL_CLIENTS.map(() => '-'),
        `refused: ${x.reason}`,
      ]),
      ...(o.error ? [[o.location, '-', '-', '-', '-', '-', '-', ...KUBECTL_CLIENTS.map(() => '-'), `ERROR ${o.error}`]] : []),
    ]);
    emit(
      io,
      table(['LOCATION', 'CLUSTER', 'OPERATION', 'KEEPALIVE', 'HOLD', 'SPDY', 'WEBSOCKET', ...KUBECTL_CLIENTS.map((c) => c.label), 'VERDICT'], rows) +
        '\n' +
        KUBECTL_LEGEND +
        '\n',
      values.out,
    );
  }
  if (outcomes.some((o) => o.error)) return EXIT.BROKEN;
  return exitCodeFor(outcomes.flatMap((o) => o.summary?.reports ?? []));
}
