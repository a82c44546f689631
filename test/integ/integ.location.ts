/**
 * A real-account integration test (@aws-cdk/integ-tests-alpha): deploy one
 * location against a cluster you name, invoke the probe once, and assert that
 * its metrics arrived in CloudWatch and that the ticket topic accepts a
 * publish (which proves the key policy lets services use it).
 *
 * It needs credentials and a cluster, so it does not run here: its snapshot
 * is checked by test/infra/integ-snapshot.test.ts. To run it (README,
 * "A real-account test"):
 *
 *   KSP_INTEG_CONFIG=my-location.yaml npx @aws-cdk/integ-runner@latest \
 *     --app "npx tsx {filePath}" --directory test/integ --update-on-failed
 *
 * The config is a deployment config with exactly one location and cluster;
 * apply `kube-stream-probe manifest` in the cluster and map the role first.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { ExpectedResult, IntegTest, InvocationType } from '@aws-cdk/integ-tests-alpha';
import { LocationStack } from '../../infra/location-stack.js';
import { loadProbeConfig } from '../../src/config/load.js';
import { METRIC_NAMESPACE } from '../../src/metrics/contract.js';
import { probeError } from '../../src/errors.js';

export function buildIntegApp(app: App, configPath: string): { stack: LocationStack; test: IntegTest } {
  const config = loadProbeConfig(configPath);
  if (config.locations.length !== 1) throw probeError('CONFIG_INVALID', `${configPath}: the integration test deploys exactly one location`, { field: 'locations' });
  const location = config.locations[0]!;
  const stack = new LocationStack(app, `ksp-integ-${location.name}`, { config, location });
  // The assertions run in the location's own account and region, so they may reference its resources.
  const assertionStack = new Stack(app, `ksp-integ-${location.name}-assertions`, { env: { account: location.account, region: location.region } });
  const test = new IntegTest(app, 'KubeStreamProbeInteg', { testCases: [stack], assertionStack, diffAssets: false, stackUpdateWorkflow: false });

  // One run, synchronously: the reply is the CLI's JSON, with every verdict.
  const run = test.assertions.invokeFunction({
    functionName: stack.probe.function.functionName,
    invocationType: InvocationType.REQUEST_RESPONSE,
    payload: JSON.stringify({ holds: ['0s'], keepalives: ['kubectl'] }),
  });
  run.expect(ExpectedResult.objectLike({ StatusCode: 200, Payload: ExpectedResult.stringLikeRegexp('"ok":true') }));

  // Its metrics arrived (CloudWatch takes a minute or two to list new metrics).
  run
    .next(
      test.assertions.awsApiCall('CloudWatch', 'listMetrics', {
        Namespace: METRIC_NAMESPACE,
        MetricName: 'UpgradeSuccess',
        Dimensions: [{ Name: 'Location', Value: location.name }],
      }),
    )
    .expect(ExpectedResult.objectLike({ Metrics: ExpectedResult.arrayWith([ExpectedResult.objectLike({ MetricName: 'UpgradeSuccess' })]) }))
    .waitForAssertions({ totalTimeout: Duration.minutes(10), interval: Duration.seconds(30) });

  // The ticket topic takes a message: its key admits the caller (CloudWatch gets the same grant by service).
  const publish = test.assertions.awsApiCall('SNS', 'publish', { TopicArn: stack.probe.ticketTopic.topicArn, Message: 'kube-stream-probe integration test: the ticket topic works' });
  publish.provider.addToRolePolicy({ Effect: 'Allow', Action: ['kms:GenerateDataKey*', 'kms:Decrypt'], Resource: ['*'] });
  publish.expect(ExpectedResult.objectLike({ MessageId: ExpectedResult.stringLikeRegexp('.+') }));
  return { stack, test };
}

if (process.argv[1] && /integ\.location\.[tj]s$/.test(process.argv[1])) {
  const app = new App();
  buildIntegApp(app, process.env.KSP_INTEG_CONFIG ?? 'infra/examples/single-location.yaml');
  app.synth();
}
