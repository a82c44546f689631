/**
 * A real-account integration test (@aws-cdk/integ-tests-alpha): deploy one
 * location against a cluster you name, under names of its own (so it never
 * collides with a deployed location), and prove the paths that matter:
 *
 * 1. the probe runs as its schedule runs it: the schedule's own target input,
 *    read back from EventBridge Scheduler, invoked synchronously; the reply is ok;
 * 2. its metrics arrived in CloudWatch;
 * 3. a page reaches a person: an SQS queue subscribed to each topic stands in
 *    for the on-call; one KubectlWorks component is set to ALARM, its PAGE
 *    composite follows, EventBridge hands the change to the notifier, which
 *    reads the location's evidence lines and publishes to the page topic
 *    (its role, the topic's key); the message lands in the page queue with
 *    the alarm's name, the failed run's diagnosis (a failed session's evidence
 *    line the test writes: the probe's own runs pass) and a Logs Insights link
 *    to that run;
 * 4. with a long-hold schedule in the config: one run of its Fargate task in
 *    the location's subnets, which must stop having exited 0.
 *
 * It needs credentials and a cluster, so it does not run here: CI synthesizes
 * it and checks its snapshot (test/infra/integ-snapshot.test.ts). To run it
 * (README, "A real-account test"):
 *
 *   KSP_INTEG_CONFIG=my-location.yaml KSP_INTEG_RUN=$(date +%s) npx @aws-cdk/integ-runner@latest \
 *     --app "npx tsx {filePath}" --directory test/integ --update-on-failed
 *
 * The config is a deployment config with exactly one location and cluster;
 * apply `kube-stream-probe manifest` in the cluster and map the role first.
 */
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { ExpectedResult, IntegTest, InvocationType } from '@aws-cdk/integ-tests-alpha';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import { LocationStack } from '../../infra/location-stack.js';
import { loadProbeConfig, readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig } from '../../src/config/probe-config.js';
import { EVIDENCE_LOG_MSG, type EvidenceLogLine } from '../../src/lambda/evidence-log.js';
import { METRIC_NAMESPACE } from '../../src/metrics/contract.js';
import { probeError } from '../../src/errors.js';

export interface IntegApp {
  readonly stack: LocationStack;
  readonly assertions: Stack;
  readonly test: IntegTest;
  /** Step 3: the failed run's evidence line the test logs, and the pattern the page's body must match (checked here too). */
  readonly page: { readonly line: Record<string, unknown>; readonly at: number; readonly alarmName: string; readonly bodyPattern: string };
}

/** `run` makes every name unique (project `ksp-i<run>`): the function, schedule group, dashboard, alarms, task family. */
export function buildIntegApp(app: App, configPath: string, run = 'snapshot', now = Date.now()): IntegApp {
  if (!/^[a-z0-9]{1,12}$/.test(run))
    throw probeError('CONFIG_INVALID', `KSP_INTEG_RUN "${run}" must be 1-12 lower-case letters or digits`, { field: 'KSP_INTEG_RUN' });
  const base = loadProbeConfig(configPath);
  if (base.locations.length !== 1)
    throw probeError('CONFIG_INVALID', `${configPath}: the integration test deploys exactly one location`, { field: 'locations' });
  // Its own project name, and no e-mail: the queues below are its subscribers.
  const config = parseProbeConfig(
    { ...(readConfigDocument(configPath) as object), project: `ksp-i${run}`, alarmEmail: undefined, ticketEmail: undefined },
    configPath,
  );
  const location = config.locations[0]!;
  const cluster = config.clusters.find((c) => !location.clusters || location.clusters.includes(c.name))!;
  const stack = new LocationStack(app, `${config.project}-${location.name}`, { config, location });
  const probe = stack.probe;

  // Stand-ins for the people: a queue on each topic (SNS → SQS; the topic key is SNS's, the queues' SQS-managed).
  const inboxes = (['page', 'ticket'] as const).map((kind) => {
    const queue = new sqs.Queue(stack, `Integ${kind}Inbox`, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.DESTROY,
      retentionPeriod: Duration.hours(1),
    });
    (kind === 'page' ? probe.pageTopic : probe.ticketTopic).addSubscription(new subs.SqsSubscription(queue, { rawMessageDelivery: true }));
    return queue;
  });
  const [pageInbox] = inboxes as [sqs.Queue, sqs.Queue];

  // The assertions run in the location's own account and region, so they may reference its resources.
  const assertions = new Stack(app, `${stack.stackName}-assertions`, { env: { account: location.account, region: location.region } });
  const test = new IntegTest(app, 'KubeStreamProbeInteg', { testCases: [stack], assertionStack: assertions, diffAssets: false, stackUpdateWorkflow: false });

  // 1. The run the schedule makes: its target's input, read back from Scheduler, invoked synchronously.
  const [scheduleName, schedule] = [...probe.schedulesByName].find(([name]) => !probe.taskDefinitions.has(name))!;
  const scheduled = test.assertions.awsApiCall('Scheduler', 'getSchedule', { Name: schedule.scheduleName, GroupName: probe.scheduleGroup.scheduleGroupName });
  scheduled.expect(
    ExpectedResult.objectLike({
      Target: ExpectedResult.objectLike({ Arn: probe.function.functionArn, Input: ExpectedResult.stringLikeRegexp(`"schedule":"${scheduleName}"`) }),
    }),
  );
  const run0 = test.assertions.invokeFunction({
    functionName: probe.function.functionName,
    invocationType: InvocationType.REQUEST_RESPONSE,
    payload: scheduled.getAttString('Target.Input'),
  });
  run0.expect(ExpectedResult.objectLike({ StatusCode: 200, Payload: ExpectedResult.stringLikeRegexp('"ok":true') }));

  // 2. Its metrics arrived (CloudWatch takes a minute or two to list new metrics).
  const metrics = test.assertions.awsApiCall('CloudWatch', 'listMetrics', {
    Namespace: METRIC_NAMESPACE,
    MetricName: 'UpgradeSuccess',
    Dimensions: [{ Name: 'Location', Value: location.name }],
  });
  metrics
    .expect(ExpectedResult.objectLike({ Metrics: ExpectedResult.arrayWith([ExpectedResult.objectLike({ MetricName: 'UpgradeSuccess' })]) }))
    .waitForAssertions({ totalTimeout: Duration.minutes(10), interval: Duration.seconds(30) });

  // 3. A page reaches the page queue: a failed run's evidence line in the probe's log group (the probe's own runs pass
  // here, so the test writes one, dated when the app is synthesized: integ-runner deploys it minutes later, inside the
  // notifier's first half-hour window), a component to ALARM, the composite follows, the notifier finds that run
  // through CloudWatch Logs' own JSON filter and publishes its diagnosis and the Logs Insights link to it.
  const failedRun = `integ-${run}-failed`;
  const line: Partial<EvidenceLogLine> & Record<string, unknown> = {
    level: 'warn',
    msg: EVIDENCE_LOG_MSG,
    run: failedRun,
    location: location.name,
    schedule: 'integ',
    cluster: cluster.name,
    session: 'WebSocket exec 0s',
    row: 'exec websocket kubectl 0s',
    attempt: 'only',
    ok: false,
    diagnosis: 'integ-test: a failed session the integration test logged, to prove a page finds and links its run',
    check: 'nothing: this line is the integration test',
  };
  const streamName = `integ-${run}`;
  const createStream = test.assertions.awsApiCall('CloudWatchLogs', 'createLogStream', {
    logGroupName: probe.logGroup.logGroupName,
    logStreamName: streamName,
  });
  const putLine = test.assertions.awsApiCall('CloudWatchLogs', 'putLogEvents', {
    logGroupName: probe.logGroup.logGroupName,
    logStreamName: streamName,
    logEvents: [{ timestamp: now, message: JSON.stringify(line) }],
  });
  for (const call of [createStream, putLine])
    call.provider.addToRolePolicy({ Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: [probe.logGroup.logGroupArn] });
  const component = probe.alarms!.byKey.get(`kubectl/${cluster.name}/exec`)!;
  const page = probe.alarms!.byKey.get(`page/${cluster.name}`)!;
  const setAlarm = test.assertions.awsApiCall('CloudWatch', 'setAlarmState', {
    AlarmName: component.alarmName,
    StateValue: 'ALARM',
    StateReason: 'kube-stream-probe integration test: does the page reach a person?',
  });
  const bodyPattern = `${page.alarmName} is ALARM[\\s\\S]*Diagnosis: integ-test: [\\s\\S]*Failed in run ${failedRun} [\\s\\S]*That run's evidence \\(what the wire showed\\): https://${location.region}\\.console\\.aws\\.amazon\\.com/cloudwatch/home\\?region=${location.region}#logs-insights:queryDetail=`;
  const received = test.assertions.awsApiCall('SQS', 'receiveMessage', { QueueUrl: pageInbox.queueUrl, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 });
  received.provider.addToRolePolicy({ Effect: 'Allow', Action: ['sqs:ReceiveMessage'], Resource: [pageInbox.queueArn] });
  received
    .expect(
      ExpectedResult.objectLike({
        Messages: ExpectedResult.arrayWith([
          ExpectedResult.objectLike({
            Body: ExpectedResult.stringLikeRegexp(bodyPattern),
          }),
        ]),
      }),
    )
    .waitForAssertions({ totalTimeout: Duration.minutes(5), interval: Duration.seconds(20) });

  const chain = [scheduled, run0, metrics, createStream, putLine, setAlarm, received];

  // 4. The long-hold task, when the config has one: started in the location's subnets, stopped with exit code 0.
  const [taskName, definition] = [...probe.taskDefinitions][0] ?? [];
  if (taskName && definition && probe.taskCluster && probe.network) {
    const started = test.assertions.awsApiCall('ECS', 'runTask', {
      cluster: probe.taskCluster.clusterName,
      taskDefinition: definition.taskDefinitionArn,
      launchType: 'FARGATE',
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: location.vpc!.subnetIds,
          securityGroups: probe.network.securityGroups.map((g) => g.securityGroupId),
          assignPublicIp: 'DISABLED',
        },
      },
      overrides: {
        containerOverrides: [{ name: 'probe', environment: [{ name: 'KSP_EVENT', value: JSON.stringify({ holds: ['0s'], keepalives: ['kubectl'] }) }] }],
      },
    });
    started.provider.addToRolePolicy({ Effect: 'Allow', Action: ['iam:PassRole'], Resource: [definition.taskRole.roleArn, definition.executionRole!.roleArn] });
    started.expect(ExpectedResult.objectLike({ failures: [] }));
    const stopped = test.assertions.awsApiCall('ECS', 'describeTasks', {
      cluster: probe.taskCluster.clusterName,
      tasks: [started.getAttString('tasks.0.taskArn')],
    });
    stopped
      .expect(
        ExpectedResult.objectLike({ tasks: [ExpectedResult.objectLike({ lastStatus: 'STOPPED', containers: [ExpectedResult.objectLike({ exitCode: 0 })] })] }),
      )
      .waitForAssertions({ totalTimeout: Duration.minutes(15), interval: Duration.seconds(30) });
    chain.push(started, stopped);
  }
  chain.reduce((a, b) => a.next(b));
  return { stack, assertions, test, page: { line, at: now, alarmName: page.alarmName, bodyPattern } };
}

if (process.argv[1] && /integ\.location\.[tj]s$/.test(process.argv[1])) {
  const app = new App();
  buildIntegApp(app, process.env.KSP_INTEG_CONFIG ?? 'infra/examples/single-location.yaml', process.env.KSP_INTEG_RUN ?? 'snapshot');
  app.synth();
}
