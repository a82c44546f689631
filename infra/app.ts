/**
 * The CDK app: one LocationStack per configured location, checked by cdk-nag.
 *   npx cdk synth -c config=infra/examples/single-location.yaml
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { loadProbeConfig } from '../src/config/load.js';
import { LocationStack } from './location-stack.js';

export function buildApp(app: App, configPath: string): LocationStack[] {
  const config = loadProbeConfig(configPath);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true }));
  return config.locations.map((location) => new LocationStack(app, `${config.project}-${location.name}`, { config, location }));
}

if (process.argv[1] && /infra\/app\.[tj]s$/.test(process.argv[1])) {
  const app = new App();
  const configPath = (app.node.tryGetContext('config') as string | undefined) ?? 'infra/examples/single-location.yaml';
  try {
    buildApp(app, configPath);
  } catch (err) {
    process.stderr.write(`kube-stream-probe infra: ${(err as Error).message}\n`);
    process.exit(1);
  }
  app.synth();
}
