/**
 * Where the probe function's code and the task image come from. From a clone, the construct bundles
 * functions/probe.ts at synth (NodejsFunction, esbuild) and the image is built from source at deploy
 * (container/Dockerfile's `source` stage). In the npm package (`kube-stream-probe/cdk`), both are prebuilt by
 * `npm pack` (scripts/package.ts) with these same options, so a CDK app needs neither esbuild nor our sources:
 * scripts/package.ts bundles this module with `__KSP_PACKAGE__` defined, and the assets are the package's
 * dist/lambda and dist/image.
 */
import { fileURLToPath } from 'node:url';
import { Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';

declare const __KSP_PACKAGE__: boolean | undefined;

/** True in the packaged construct (dist/cdk.js), false when run from the sources. */
export const PACKAGED = typeof __KSP_PACKAGE__ !== 'undefined' && __KSP_PACKAGE__;

/** The packaged construct's directory for `what` (dist/lambda, dist/image), next to dist/cdk.js. */
export const packagedDir = (what: 'lambda' | 'image'): string => fileURLToPath(new URL(`./${what}`, import.meta.url));

/** The Lambda entry when built from the sources. */
export const PROBE_ENTRY = fileURLToPath(new URL('../functions/probe.ts', import.meta.url));

/** The file the Lambda bundle is written to (NodejsFunction names it index.mjs for ESM); its handler is `index.handler`. */
export const PROBE_HANDLER = 'handler';
/** The notifier's entry in the same bundle (functions/probe.ts `notify`). */
export const NOTIFY_HANDLER = 'notify';
/** The cross-location aggregator's entry (functions/probe.ts `aggregate`). */
export const AGGREGATE_HANDLER = 'aggregate';

/** The Lambda bundle's esbuild options, in NodejsFunction's words (the package build maps them to esbuild's). */
export const PROBE_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node20',
  minify: true,
  sourceMap: true,
  mainFields: ['module', 'main'],
  // The Node.js runtimes ship AWS SDK v3; bundling it would double the package (docs/decisions.md).
  // bufferutil is native (ws falls back to JavaScript without it; the Lambda moves few bytes).
  externalModules: ['@aws-sdk/*', 'bufferutil', 'utf-8-validate'],
  banner: "import { createRequire as __ksp_cr } from 'node:module'; const require = __ksp_cr(import.meta.url);",
} as const satisfies BundlingOptions;

/** The same options as esbuild's (what NodejsFunction passes it), for the packaged bundle. */
export const probeEsbuildOptions = (outfile: string) => ({
  entryPoints: [PROBE_ENTRY],
  outfile,
  bundle: true,
  platform: 'node' as const,
  format: 'esm' as const,
  target: PROBE_BUNDLING.target,
  minify: PROBE_BUNDLING.minify,
  sourcemap: PROBE_BUNDLING.sourceMap,
  mainFields: [...PROBE_BUNDLING.mainFields],
  external: [...PROBE_BUNDLING.externalModules],
  banner: { js: PROBE_BUNDLING.banner },
});

/**
 * A function running one of the bundle's other entries (the notifier, the cross-location aggregator): the packaged
 * bundle in the npm package, else built at synth from `entry` (the construct's `entry` prop) or functions/probe.ts.
 */
export function bundleEntryFunction(
  scope: Construct,
  id: string,
  handler: string,
  entry: string | undefined,
  props: Omit<lambda.FunctionProps, 'code' | 'handler'>,
): lambda.Function {
  return PACKAGED && entry === undefined
    ? new lambda.Function(scope, id, { ...props, code: lambda.Code.fromAsset(packagedDir('lambda')), handler: `index.${handler}` })
    : new NodejsFunction(scope, id, {
        ...props,
        entry: entry ?? PROBE_ENTRY,
        handler,
        bundling: { ...PROBE_BUNDLING, mainFields: [...PROBE_BUNDLING.mainFields], externalModules: [...PROBE_BUNDLING.externalModules] },
      });
}

/** An entry function's own role (Lambda assumes it) and the log group it writes: the rest is granted by its caller. */
export function entryFunctionRole(scope: Construct, description: string, retention: logs.RetentionDays): { role: iam.Role; logGroup: logs.LogGroup } {
  const role = new iam.Role(scope, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  const logGroup = new logs.LogGroup(scope, 'Logs', { retention });
  role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
  return { role, logGroup };
}

/** Lets `role` publish to topics encrypted under the key `keyArn` (SNS's data-key calls, on that key only). */
export function grantTopicKey(role: iam.Role, keyArn: string): void {
  role.addToPolicy(new iam.PolicyStatement({ actions: ['kms:Decrypt', 'kms:GenerateDataKey*'], resources: [keyArn] }));
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
    reason: "Publishing to an encrypted topic needs SNS's data-key calls on the topic's key; GenerateDataKey* covers them, on that one key only.",
  });
}
