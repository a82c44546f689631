/**
 * `invoke` for holds longer than a Lambda run: starts the location's probe
 * task (ECS Fargate, functions/task.ts) with the requested event, waits for
 * it to stop (saying so while it waits), and reads the run's summary from the
 * task's last log line (`msg: "result"`). The task definitions are the ones
 * the StreamProbe construct made for the location's long-hold schedules
 * (family `<project>-<location>-<schedule>`, cluster `<project>-<location>`);
 * their KSP_NETWORK says where to run (subnets, security groups).
 */
import type { ECSClient } from '@aws-sdk/client-ecs';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { probeError } from '../errors.js';
import type { LocationSummary } from '../metrics/location-summary.js';

export interface TaskInvokeClients {
  readonly ecs: Pick<ECSClient, 'send'>;
  readonly logs: Pick<CloudWatchLogsClient, 'send'>;
}

export interface TaskInvokeOptions {
  readonly project: string;
  readonly location: string;
  readonly event: object;
  /** The task's time budget, s (KSP_TASK_SECONDS). */
  readonly taskSeconds: number;
  /** How often DescribeTasks is asked, ms. @default 15 000 */
  readonly pollMs?: number;
  readonly progress?: (text: string) => void;
  readonly signal?: AbortSignal;
}

type Env = { name?: string; value?: string }[];

export async function invokeTask(clients: TaskInvokeClients, o: TaskInvokeOptions): Promise<LocationSummary> {
  const { ListTaskDefinitionFamiliesCommand, DescribeTaskDefinitionCommand, RunTaskCommand, DescribeTasksCommand } = await import('@aws-sdk/client-ecs');
  const { GetLogEventsCommand } = await import('@aws-sdk/client-cloudwatch-logs');
  const prefix = `${o.project}-${o.location}-`;
  const families = (await clients.ecs.send(new ListTaskDefinitionFamiliesCommand({ familyPrefix: prefix, status: 'ACTIVE' }))).families ?? [];
  const family = families.find((f) => f.startsWith(prefix));
  if (!family)
    throw probeError(
      'CONFIG_INVALID',
      `location ${o.location} has no probe task (no task definition ${prefix}*): give it a schedule with a hold longer than a Lambda run, in a VPC, and deploy`,
      { field: 'locations' },
    );
  const td = (await clients.ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: family }))).taskDefinition;
  const container = td?.containerDefinitions?.[0];
  const env = (container?.environment ?? []) as Env;
  const network = JSON.parse(env.find((e) => e.name === 'KSP_NETWORK')?.value ?? '{}') as { subnets?: string[]; securityGroups?: string[] };
  const logGroup = container?.logConfiguration?.options?.['awslogs-group'];
  const streamPrefix = container?.logConfiguration?.options?.['awslogs-stream-prefix'];
  if (!td?.taskDefinitionArn || !container?.name || !network.subnets?.length || !logGroup || !streamPrefix) {
    throw probeError('CONFIG_INVALID', `task definition ${family} lacks its container, KSP_NETWORK or awslogs settings: redeploy the location`, {
      field: 'taskDefinition',
    });
  }
  const run = await clients.ecs.send(
    new RunTaskCommand({
      cluster: `${o.project}-${o.location}`,
      taskDefinition: td.taskDefinitionArn,
      launchType: 'FARGATE',
      count: 1,
      networkConfiguration: { awsvpcConfiguration: { subnets: network.subnets, securityGroups: network.securityGroups ?? [], assignPublicIp: 'DISABLED' } },
      overrides: {
        containerOverrides: [
          {
            name: container.name,
            environment: [
              { name: 'KSP_EVENT', value: JSON.stringify(o.event) },
              { name: 'KSP_TASK_SECONDS', value: String(o.taskSeconds) },
            ],
          },
        ],
      },
    }),
  );
  const taskArn = run.tasks?.[0]?.taskArn;
  if (!taskArn)
    throw probeError(
      'CONFIG_INVALID',
      `RunTask started nothing: ${(run.failures ?? []).map((f) => `${f.arn ?? ''} ${f.reason ?? ''}`).join('; ') || 'no reason given'}`,
      { field: 'taskDefinition' },
    );
  const taskId = taskArn.split('/').pop()!;
  const t0 = Date.now();
  for (;;) {
    if (o.signal?.aborted)
      throw probeError('INTERRUPTED', `stopped waiting for task ${taskId} (it keeps running; its result will be in ${logGroup})`, {
        signal: String(o.signal.reason),
        heldSeconds: null,
      });
    const d = await clients.ecs.send(new DescribeTasksCommand({ cluster: `${o.project}-${o.location}`, tasks: [taskArn] }));
    const task = d.tasks?.[0];
    if (task?.lastStatus === 'STOPPED') break;
    o.progress?.(`${o.location}: task ${taskId} ${task?.lastStatus ?? 'PENDING'}, ${Math.round((Date.now() - t0) / 1000)} s of up to ${o.taskSeconds} s`);
    await new Promise((r) => setTimeout(r, o.pollMs ?? 15_000));
  }
  // The summary is the task's last log line (functions/task.ts), in the stream awslogs names prefix/container/id.
  let token: string | undefined;
  let result: LocationSummary | undefined;
  for (let page = 0; page < 100; page++) {
    const events = await clients.logs.send(
      new GetLogEventsCommand({ logGroupName: logGroup, logStreamName: `${streamPrefix}/${container.name}/${taskId}`, startFromHead: true, nextToken: token }),
    );
    for (const e of events.events ?? []) {
      try {
        const line = JSON.parse(e.message ?? '') as { msg?: string; summary?: LocationSummary };
        if (line.msg === 'result' && line.summary) result = line.summary;
      } catch {
        /* not a JSON line */
      }
    }
    if (!events.nextForwardToken || events.nextForwardToken === token) break;
    token = events.nextForwardToken;
  }
  if (!result)
    throw probeError('CONFIG_INVALID', `task ${taskId} stopped without a result line in ${logGroup} (see its log stream for why)`, { field: 'taskDefinition' });
  return result;
}
