/**
 * The CDK app: one LocationStack per configured location, and the cross-location stack when a cluster is probed
 * from several, checked by cdk-nag.
 *   npx cdk synth -c config=infra/examples/single-location.yaml
 */
import { App, type Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { loadProbeConfig } from '../src/config/load.js';
import { crossLocationPlan } from '../src/config/cross-location.js';
import { CROSS_LOCATION_NAME, CrossLocationStack } from './cross-location.js';
import { LocationStack } from './location-stack.js';

/**
 * The CDK app: a LocationStack per location, and a CrossLocationStack (infra/cross-location.ts) in the home location
 * when a cluster is probed from several locations.
 */
export interface AppStacks {
  readonly locations: LocationStack[];
  readonly crossLocation?: CrossLocationStack;
  /** Every stack of the app. */
  readonly all: Stack[];
}

export function buildApp(app: App, configPath: string): AppStacks {
  const config = loadProbeConfig(configPath);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true }));
  const locations = config.locations.map((location) => new LocationStack(app, `${config.project}-${location.name}`, { config, location }));
  const plan = crossLocationPlan(config);
  const crossLocation = plan ? new CrossLocationStack(app, `${config.project}-${CROSS_LOCATION_NAME}`, { config, plan }) : undefined;
  return { locations, ...(crossLocation ? { crossLocation } : {}), all: [...locations, ...(crossLocation ? [crossLocation] : [])] };
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
