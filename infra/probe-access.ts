/**
 * What a runner (the function, the long-hold task) may do at run time, and nothing else (every call is evaluated
 * with AWS's rules in test/infra/iam-authority.test.ts).
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { regionOfArn } from '../src/aws/arn.js';
import { METRIC_NAMESPACE } from '../src/metrics/contract.js';
import type { StreamProbeProps } from './props.js';

/**
 * The grants of a runner's role: PutMetricData in our namespace, GetSecretValue on
 * each secret, kms:Decrypt through Secrets Manager for their keys, DescribeCluster for EKS clusters without
 * caData, and an access entry where asked.
 */
export function grantProbeAccess(scope: Construct, props: StreamProbeProps, role: iam.Role, entryId: string): void {
  const stack = Stack.of(scope);
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'],
      conditions: { StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } },
    }),
  );
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'cloudwatch:PutMetricData has no resource-level permissions; it is limited to the KubeStreamProbe namespace by the cloudwatch:namespace condition.',
  });
  const secrets = props.clusters.flatMap((c) => (c.auth.type === 'secret' ? [c.auth.secret] : []));
  if (secrets.length) role.addToPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secrets.map((s) => s.secretArn) }));
  for (const secret of secrets) {
    if (!secret.encryptionKey) continue;
    // Secrets Manager decrypts with the caller's rights, and only on its behalf; in the secret's own region
    // (CDK's grantRead would name the stack's region, wrong for a secret in another one).
    const region = Token.isUnresolved(secret.secretArn) ? stack.region : regionOfArn(secret.secretArn);
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [secret.encryptionKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com` } },
      }),
    );
  }
  const describe = props.clusters.flatMap((c) =>
    c.auth.type === 'eks' && !c.caData
      ? [stack.formatArn({ service: 'eks', resource: 'cluster', resourceName: c.auth.clusterName, region: c.auth.region ?? stack.region })]
      : [],
  );
  if (describe.length) role.addToPolicy(new iam.PolicyStatement({ actions: ['eks:DescribeCluster'], resources: describe }));
  for (const c of props.clusters) {
    if (c.auth.type !== 'eks' || !c.auth.accessEntryGroup) continue;
    // The probe role in a Kubernetes group of the cluster; `kube-stream-probe manifest --group` binds the group's least-privilege Role.
    new eks.CfnAccessEntry(scope, `${entryId}-${c.name}`, {
      clusterName: c.auth.clusterName,
      principalArn: role.roleArn,
      kubernetesGroups: [c.auth.accessEntryGroup],
      type: 'STANDARD',
    });
  }
}
