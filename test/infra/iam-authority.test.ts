/**
 * Every call a deployed location makes at run time, by the principal that
 * makes it, on the resource as deployed, evaluated with AWS's own rules (an
 * IAM policy evaluator and AWS's action catalogue: test/helpers/iam-authority.ts)
 * over the synthesized templates, not with rules we wrote:
 *
 * - the probe's own SDK calls, enumerated from the code (a new `…Command` in
 *   src/ or functions/ without an entry below fails), by the function role
 *   and the long-hold task role;
 * - what AWS services do for the location: CloudWatch alarms and EventBridge
 *   publishing to the topics (topic policy and key policy), Lambda's failed-run
 *   destination, Scheduler invoking the function or starting the task (and
 *   passing its roles), Fargate pulling the image and shipping its logs with
 *   the execution role, each service assuming its role;
 * - the operator's `invoke`, with the IAM policy the README gives;
 * - in private subnets without NAT: an endpoint for every AWS API each runner
 *   reaches, and a security-group path to it.
 *
 * Mutations at the end show the checks fail when a statement or an endpoint is missing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppStacks } from '../../infra/app.js';
import { LOCATION_PAGE_DETAIL_TYPE, LOCATION_PAGE_SOURCE } from '../../src/lambda/location-page.js';
import { LocationStack } from '../../infra/location-stack.js';
import { readConfigDocument } from '../../src/config/load.js';
import { parseProbeConfig, type LocationRuntimeConfig, type ProbeConfig } from '../../src/config/probe-config.js';
import { estimateMonthlyCost } from '../../src/config/cost.js';
import { METRIC_NAMESPACE } from '../../src/metrics/contract.js';
import { deployedTemplate, type DeployedTemplate } from '../helpers/deployed-template.js';
import { evaluate, publishRefusal, roleByArn, rolePolicies, type Call } from '../helpers/iam-authority.js';

type Json = any;

/** The AWS SDK clients' IAM service prefixes. */
const SERVICE_OF_CLIENT: Record<string, string> = {
  cloudwatch: 'cloudwatch',
  'cloudwatch-logs': 'logs',
  'secrets-manager': 'secretsmanager',
  eks: 'eks',
  ecs: 'ecs',
  lambda: 'lambda',
  sns: 'sns',
  eventbridge: 'events',
  dynamodb: 'dynamodb',
  sqs: 'sqs',
};
/** SDK operations whose IAM action has another name (the Service Authorization Reference). */
const ACTION_OF_OPERATION: Record<string, string> = { 'lambda:Invoke': 'lambda:InvokeFunction' };

/**
 * Who makes each SDK call the code makes: the probe (function and task roles), the notifier, the cross-location
 * aggregator (its sns:Publish too), or the operator (`invoke`).
 */
const CALLERS: Record<string, 'probe' | 'notifier' | 'aggregator' | 'operator'> = {
  'logs:FilterLogEvents': 'notifier',
  'sns:Publish': 'notifier',
  'events:PutEvents': 'notifier',
  'dynamodb:GetItem': 'aggregator',
  'dynamodb:PutItem': 'aggregator',
  'sqs:SendMessage': 'aggregator',
  'cloudwatch:PutMetricData': 'probe',
  'secretsmanager:GetSecretValue': 'probe',
  'eks:DescribeCluster': 'probe',
  'lambda:InvokeFunction': 'operator',
  'ecs:ListTaskDefinitionFamilies': 'operator',
  'ecs:DescribeTaskDefinition': 'operator',
  'ecs:RunTask': 'operator',
  'ecs:DescribeTasks': 'operator',
  'logs:GetLogEvents': 'operator',
};

/** Every `new XCommand(` in src/ and functions/, as an IAM action, by the client package it is imported from. */
function sdkCallsInCode(): Set<string> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk('src');
  walk('functions');
  const calls = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const clientOf = new Map<string, string>();
    for (const m of text.matchAll(
      /\{([^{}]*)\}\s*=\s*await import\('@aws-sdk\/client-([a-z-]+)'\)|import\s*\{([^{}]*)\}\s*from\s*'@aws-sdk\/client-([a-z-]+)'/g,
    )) {
      const names = m[1] ?? m[3]!;
      const client = m[2] ?? m[4]!;
      for (const n of names.split(',')) clientOf.set(n.trim().replace(/^type\s+/, ''), client);
    }
    for (const m of text.matchAll(/new (\w+)Command\(/g)) {
      const client = clientOf.get(`${m[1]}Command`);
      if (!client) throw new Error(`${file}: ${m[1]}Command is not imported from an @aws-sdk client`);
      const op = `${SERVICE_OF_CLIENT[client] ?? `unknown-client-${client}`}:${m[1]}`;
      calls.add(ACTION_OF_OPERATION[op] ?? op);
    }
  }
  return calls;
}

const ACCOUNT = (t: DeployedTemplate) => t.account;
const expectAllowed = async (calls: Call[]) => {
  const refused: string[] = [];
  for (const c of calls) {
    const v = await evaluate(c);
    if (v.decision !== 'Allowed') refused.push(`${c.principal} ${c.action} ${c.resource}: ${v.decision}${v.decision === 'Invalid' ? ` ${v.detail}` : ''}`);
  }
  return refused;
};

/** The role a service assumes: sts:AssumeRole against the role's trust policy. */
const assume = (t: DeployedTemplate, roleId: string, service: string): Call => ({
  principal: service,
  action: 'sts:AssumeRole',
  resource: t.get(roleId).arn!,
  context: { 'aws:SourceAccount': ACCOUNT(t) },
  resourcePolicy: t.resolve(t.get(roleId).props.AssumeRolePolicyDocument),
});

/** The probe's calls as one runner (function or task role) makes them, on this location's clusters. */
function probeCalls(t: DeployedTemplate, roleId: string, config: LocationRuntimeConfig): Call[] {
  const role = t.get(roleId);
  const identityPolicies = rolePolicies(t, roleId);
  const as = (action: string, resource: string, context: Record<string, string> = {}): Call => ({
    principal: role.arn!,
    identityPolicies,
    action,
    resource,
    context,
  });
  const calls: Call[] = [];
  for (const action of Object.keys(CALLERS).filter((a) => CALLERS[a] === 'probe')) {
    if (action === 'cloudwatch:PutMetricData') calls.push(as(action, '*', { 'cloudwatch:namespace': METRIC_NAMESPACE }));
    for (const c of config.clusters) {
      if (action === 'secretsmanager:GetSecretValue' && c.auth.type === 'secret') {
        calls.push(as(action, c.auth.secretArn));
        const region = c.auth.secretArn.split(':')[3]!;
        // Secrets Manager decrypts a secret under a customer-managed key with the caller's rights, through itself.
        if (c.auth.kmsKeyArn)
          calls.push({
            ...as('kms:Decrypt', c.auth.kmsKeyArn, { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com` }),
            resourcePolicy: defaultKeyPolicy(c.auth.kmsKeyArn),
          });
      }
      if (action === 'eks:DescribeCluster' && c.auth.type === 'eks' && !c.caData)
        calls.push(as(action, `arn:aws:eks:${c.auth.region ?? config.region}:${t.account}:cluster/${c.auth.clusterName}`));
    }
  }
  return calls;
}

/** A key of the account that is not in the template: its default key policy (the account may delegate to IAM). */
const defaultKeyPolicy = (keyArn: string) => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${keyArn.split(':')[4]}:root` }, Action: 'kms:*', Resource: '*' }],
});

/** A function's resource policy, as Lambda builds it from its AWS::Lambda::Permission resources. */
function functionPolicy(t: DeployedTemplate, functionArn: string): Json {
  const fn = t.ofType('AWS::Lambda::Function').find((f) => f.arn === functionArn)!;
  const Statement = t
    .ofType('AWS::Lambda::Permission')
    .filter((p) => [fn.arn, fn.name, fn.ref].includes(String(t.resolve(p.props.FunctionName))))
    .map((p, i) => {
      const props = t.resolve(p.props);
      return {
        Sid: `p${i}`,
        Effect: 'Allow',
        Principal: { Service: props.Principal },
        Action: props.Action,
        Resource: fn.arn,
        Condition: {
          ...(props.SourceArn ? { ArnLike: { 'AWS:SourceArn': props.SourceArn } } : {}),
          ...(props.SourceAccount ? { StringEquals: { 'AWS:SourceAccount': props.SourceAccount } } : {}),
        },
      };
    });
  return { Version: '2012-10-17', Statement };
}

/** Why a service may not invoke a function (its resource policy), or undefined. */
async function invokeRefusal(
  t: DeployedTemplate,
  functionArn: string,
  caller: { principal: string; context: Record<string, string> },
): Promise<string | undefined> {
  const v = await evaluate({ ...caller, action: 'lambda:InvokeFunction', resource: functionArn, resourcePolicy: functionPolicy(t, functionArn) });
  return v.decision === 'Allowed'
    ? undefined
    : `lambda:InvokeFunction on ${functionArn} by ${caller.principal}: ${v.decision}${v.decision === 'Invalid' ? ` (${v.detail})` : ''}`;
}

/** Everything AWS does for the location at run time, and the probe's own calls; the refusals. */
async function refusals(t: DeployedTemplate): Promise<string[]> {
  const calls: Call[] = [];
  const out: string[] = [];
  const fn = t.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.handler')!;
  const fnRoleId = roleByArn(t, t.resolve(fn.props.Role));
  const runtime = JSON.parse(t.resolve(fn.props.Environment.Variables.KSP_LOCATION_CONFIG)) as LocationRuntimeConfig;
  const logGroup = t.ofType('AWS::Logs::LogGroup')[0]!;
  const stream = (prefix: string) => `${logGroup.arn!.replace(/:\*$/, '')}:log-stream:${prefix}`;

  // The function: Lambda assumes its role, ships its logs with it, makes its ENIs in a VPC, runs the probe.
  calls.push(assume(t, fnRoleId, 'lambda.amazonaws.com'));
  const fnPolicies = rolePolicies(t, fnRoleId);
  for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents'])
    calls.push({ principal: t.get(fnRoleId).arn!, identityPolicies: fnPolicies, action, resource: stream('2026/12/03/[$LATEST]0123') });
  if (fn.props.VpcConfig) {
    const subnet = `arn:aws:ec2:${t.region}:${t.account}:subnet/${t.resolve(fn.props.VpcConfig.SubnetIds)[0]}`;
    for (const action of ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DeleteNetworkInterface'])
      calls.push({ principal: t.get(fnRoleId).arn!, identityPolicies: fnPolicies, action, resource: action === 'ec2:CreateNetworkInterface' ? subnet : '*' });
  }
  calls.push(...probeCalls(t, fnRoleId, runtime));

  // A failed asynchronous run: Lambda publishes it to the on-failure destination with the function's role.
  for (const cfg of t.ofType('AWS::Lambda::EventInvokeConfig')) {
    const topic = t.resolve(cfg.props.DestinationConfig.OnFailure.Destination);
    const why = await publishRefusal(t, topic, { principal: t.get(fnRoleId).arn!, identityPolicies: fnPolicies });
    if (why) out.push(`failed-run destination: ${why}`);
  }

  // Every alarm action: CloudWatch publishes as itself, for that alarm.
  for (const alarm of [...t.ofType('AWS::CloudWatch::Alarm'), ...t.ofType('AWS::CloudWatch::CompositeAlarm')]) {
    for (const topic of new Set<string>(t.resolve([...(alarm.props.AlarmActions ?? []), ...(alarm.props.OKActions ?? [])]))) {
      const why = await publishRefusal(t, topic, {
        principal: 'cloudwatch.amazonaws.com',
        context: { 'aws:SourceArn': alarm.arn!, 'aws:SourceAccount': t.account },
      });
      if (why) out.push(`alarm ${alarm.name}: ${why}`);
    }
  }
  // The notifier: Lambda assumes its role; it writes its logs, reads the probe's evidence, publishes to its topics.
  const notifier = t.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.notify');
  if (notifier) {
    const roleId = roleByArn(t, t.resolve(notifier.props.Role));
    const policies = rolePolicies(t, roleId);
    const as = (action: string, resource: string): Call => ({ principal: t.get(roleId).arn!, identityPolicies: policies, action, resource });
    calls.push(assume(t, roleId, 'lambda.amazonaws.com'));
    const config = JSON.parse(t.resolve(notifier.props.Environment.Variables.KSP_NOTIFY_CONFIG)) as {
      logGroup: string;
      routes: Record<string, { topicArn: string }>;
    };
    const group = t.ofType('AWS::Logs::LogGroup').find((g) => g.name === config.logGroup)!;
    expect(group, "the notifier reads the probe function's log group").toBe(
      t.ofType('AWS::Logs::LogGroup').find((g) => g.ref === t.resolve(fn.props.LoggingConfig.LogGroup)),
    );
    calls.push(as('logs:FilterLogEvents', group.arn!.replace(/:\*$/, '')));
    const own = t.ofType('AWS::Logs::LogGroup').find((g) => g.ref === t.resolve(notifier.props.LoggingConfig.LogGroup))!;
    for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents'])
      calls.push(as(action, `${own.arn!.replace(/:\*$/, '')}:log-stream:2026/12/03/[$LATEST]0123`));
    for (const topic of new Set(Object.values(config.routes).map((r) => r.topicArn))) {
      const why = await publishRefusal(t, topic, { principal: t.get(roleId).arn!, identityPolicies: policies });
      if (why) out.push(`notifier: ${why}`);
    }
  }

  // Every EventBridge rule target: EventBridge publishes to a topic, or invokes a function (its resource policy), as itself, for that rule.
  for (const rule of t.ofType('AWS::Events::Rule')) {
    for (const target of rule.props.Targets ?? []) {
      const arn = t.resolve(target.Arn) as string;
      if (arn.startsWith('arn:aws:lambda:')) {
        const why = await invokeRefusal(t, arn, { principal: 'events.amazonaws.com', context: { 'aws:SourceArn': rule.arn!, 'aws:SourceAccount': t.account } });
        if (why) out.push(`rule ${rule.name}: ${why}`);
        continue;
      }
      const why = await publishRefusal(t, arn, {
        principal: 'events.amazonaws.com',
        context: { 'aws:SourceArn': rule.arn!, 'aws:SourceAccount': t.account },
      });
      if (why) out.push(`rule ${rule.name}: ${why}`);
    }
  }

  // Every schedule: Scheduler assumes its role and invokes the function, or starts the task and passes its roles.
  for (const schedule of t.ofType('AWS::Scheduler::Schedule')) {
    const target = t.resolve(schedule.props.Target);
    const roleId = roleByArn(t, target.RoleArn);
    calls.push(assume(t, roleId, 'scheduler.amazonaws.com'));
    const as = (action: string, resource: string, context: Record<string, string> = {}): Call => ({
      principal: t.get(roleId).arn!,
      identityPolicies: rolePolicies(t, roleId),
      action,
      resource,
      context,
    });
    if (!target.EcsParameters) {
      calls.push(as('lambda:InvokeFunction', target.Arn));
      continue;
    }
    const td = t.ofType('AWS::ECS::TaskDefinition').find((d) => d.arn === target.EcsParameters.TaskDefinitionArn)!;
    calls.push(as('ecs:RunTask', td.arn!, { 'ecs:cluster': target.Arn }));
    for (const r of [td.props.TaskRoleArn, td.props.ExecutionRoleArn])
      calls.push(as('iam:PassRole', t.resolve(r), { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' }));

    // The task: ECS assumes both roles; the execution role pulls the image and creates the log stream; the task role probes.
    const taskRoleId = roleByArn(t, t.resolve(td.props.TaskRoleArn));
    const execRoleId = roleByArn(t, t.resolve(td.props.ExecutionRoleArn));
    calls.push(assume(t, taskRoleId, 'ecs-tasks.amazonaws.com'), assume(t, execRoleId, 'ecs-tasks.amazonaws.com'));
    const container = t.resolve(td.props.ContainerDefinitions[0]);
    const exec = (action: string, resource: string): Call => ({
      principal: t.get(execRoleId).arn!,
      identityPolicies: rolePolicies(t, execRoleId),
      action,
      resource,
    });
    const image = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com\/([^:@]+)/.exec(container.Image);
    if (!image) throw new Error(`task image ${container.Image} is not in ECR`);
    calls.push(exec('ecr:GetAuthorizationToken', '*'));
    for (const action of ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'])
      calls.push(exec(action, `arn:aws:ecr:${image[2]}:${image[1]}:repository/${image[3]}`));
    const opts = container.LogConfiguration.Options;
    const group = t.ofType('AWS::Logs::LogGroup').find((g) => g.name === opts['awslogs-group'])!;
    for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents'])
      calls.push(exec(action, `${group.arn!.replace(/:\*$/, '')}:log-stream:${opts['awslogs-stream-prefix']}/probe/0123`));
    const taskRuntime = JSON.parse(container.Environment.find((e: Json) => e.Name === 'KSP_LOCATION_CONFIG').Value) as LocationRuntimeConfig;
    calls.push(...probeCalls(t, taskRoleId, taskRuntime));
  }
  out.push(...(await expectAllowed(calls)));
  return out;
}

/** What a runner in private subnets cannot reach: each AWS API it calls needs an endpoint and a security-group path. */
function unreachable(t: DeployedTemplate, mode: 'create' | 'existing'): string[] {
  const missing: string[] = [];
  const endpoints = t.ofType('AWS::EC2::VPCEndpoint').map((e) => t.resolve(e.props));
  const egressOf = (sg: string) => [
    ...(t.ofType('AWS::EC2::SecurityGroup').find((g) => g.ref === sg)?.props.SecurityGroupEgress ?? []).map((e: Json) => t.resolve(e)),
    ...t
      .ofType('AWS::EC2::SecurityGroupEgress')
      .map((e) => t.resolve(e.props))
      .filter((e) => e.GroupId === sg),
  ];
  const ingressTo = (sg: string) =>
    t
      .ofType('AWS::EC2::SecurityGroupIngress')
      .map((i) => t.resolve(i.props))
      .filter((i) => i.GroupId === sg);
  const check = (who: string, groups: string[], services: string[]) => {
    const egress = groups.flatMap(egressOf).filter((e) => e.FromPort <= 443 && e.ToPort >= 443);
    for (const service of services) {
      const name = `com.amazonaws.${t.region}.${service}`;
      if (service === 's3') {
        const gw = endpoints.find((e) => e.ServiceName === name && e.VpcEndpointType === 'Gateway');
        if (mode === 'create' && !(gw?.RouteTableIds?.length > 0)) missing.push(`${who}: no S3 gateway endpoint in a route table (${name})`);
        if (!egress.some((e) => e.DestinationPrefixListId)) missing.push(`${who}: its security groups do not reach S3's prefix list on 443`);
        continue;
      }
      if (mode === 'existing') {
        if (!egress.some((e) => e.DestinationSecurityGroupId)) missing.push(`${who}: no egress to the existing endpoints' groups`);
        continue;
      }
      const ep = endpoints.find((e) => e.ServiceName === name && e.VpcEndpointType === 'Interface');
      if (!ep) {
        missing.push(`${who}: no interface endpoint ${name}`);
        continue;
      }
      if (!ep.PrivateDnsEnabled) missing.push(`${who}: ${name} has private DNS off (the SDK's default host name would not resolve to it)`);
      const admitted = ep.SecurityGroupIds.some(
        (g: string) =>
          egress.some((e) => e.DestinationSecurityGroupId === g) &&
          ingressTo(g).some((i) => groups.includes(i.SourceSecurityGroupId) && i.FromPort <= 443 && i.ToPort >= 443),
      );
      if (!admitted) missing.push(`${who}: no security-group path to ${name} on 443`);
    }
  };
  const probeServices = (config: LocationRuntimeConfig) => [
    'monitoring',
    ...(config.clusters.some((c) => c.auth.type === 'secret') ? ['secretsmanager'] : []),
    ...(config.clusters.some((c) => c.auth.type === 'eks' && !c.caData) ? ['eks'] : []),
  ];
  const fn = t.ofType('AWS::Lambda::Function')[0]!;
  const fnConfig = JSON.parse(t.resolve(fn.props.Environment.Variables.KSP_LOCATION_CONFIG)) as LocationRuntimeConfig;
  check('the function', t.resolve(fn.props.VpcConfig.SecurityGroupIds), probeServices(fnConfig));
  for (const schedule of t.ofType('AWS::Scheduler::Schedule')) {
    const target = t.resolve(schedule.props.Target);
    if (!target.EcsParameters) continue;
    const td = t.ofType('AWS::ECS::TaskDefinition').find((d) => d.arn === target.EcsParameters.TaskDefinitionArn)!;
    const container = t.resolve(td.props.ContainerDefinitions[0]);
    // Fargate (platform 1.4+) pulls an ECR image with ecr.api and ecr.dkr, its layers from S3, and awslogs needs logs.
    const fargate = [
      ...(/\.dkr\.ecr\./.test(container.Image) ? ['ecr.api', 'ecr.dkr', 's3'] : []),
      ...(container.LogConfiguration?.LogDriver === 'awslogs' ? ['logs'] : []),
    ];
    const config = JSON.parse(container.Environment.find((e: Json) => e.Name === 'KSP_LOCATION_CONFIG').Value) as LocationRuntimeConfig;
    check(`the task ${td.name}`, target.EcsParameters.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups, [...probeServices(config), ...fargate]);
  }
  return missing;
}

const deploy = (stack: LocationStack, mutate?: (template: Json) => void): DeployedTemplate => {
  // A copy: Template.fromStack caches its JSON, and a mutation must not reach the next test's template.
  const template = structuredClone(Template.fromStack(stack).toJSON());
  mutate?.(template);
  return deployedTemplate(template, { account: stack.account, region: stack.region, stackName: stack.stackName });
};

/** private-vpc.yaml with a long-hold schedule (a task) and the given endpoints; a secret cluster under its own key too. */
function withTaskRunner(endpoints: Json): LocationStack {
  const c = readConfigDocument('infra/examples/private-vpc.yaml') as Json;
  c.schedules.push({ name: 'long', expression: 'rate(6 hours)', holds: ['30m'], keepalives: ['kubectl', 'none'] });
  c.clusters.push({
    name: 'gitops',
    endpoint: 'https://k8s.gitops.example.com:6443',
    auth: {
      type: 'secret',
      secretArn: 'arn:aws:secretsmanager:eu-west-1:333333333333:secret:ksp/gitops-a1B2c3',
      kmsKeyArn: 'arn:aws:kms:eu-west-1:333333333333:key/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b',
    },
    target: { namespace: 'kube-stream-probe' },
  });
  c.locations[0].vpc.endpoints = endpoints;
  const config = parseProbeConfig(c);
  const stack = new LocationStack(new App(), `kube-stream-probe-${config.locations[0]!.name}`, { config, location: config.locations[0]! });
  configs.set(stack, config);
  return stack;
}
const configs = new Map<LocationStack, ProbeConfig>();

const stacks = new Map<string, LocationStack>();
let multi: AppStacks;
beforeAll(() => {
  for (const example of ['single-location', 'multi-location', 'private-vpc']) {
    const app = buildApp(new App(), `infra/examples/${example}.yaml`);
    app.locations.forEach((s, i) => stacks.set(`${example}#${i}`, s));
    if (example === 'multi-location') multi = app;
  }
  stacks.set(
    'task, endpoints create',
    withTaskRunner({ mode: 'create', routeTableIds: ['rtb-0a1b2c3d4e5f60718', 'rtb-1a2b3c4d5e6f70819'], s3PrefixListId: 'pl-6da54004' }),
  );
  stacks.set('task, endpoints existing', withTaskRunner({ mode: 'existing', securityGroupIds: ['sg-0e1d2c3b4a5968778'], s3PrefixListId: 'pl-6da54004' }));
  stacks.set('task, behind NAT', withTaskRunner({ mode: 'none' }));
}, 180_000);

describe("the code's AWS calls are all accounted for", () => {
  it('every SDK command in src/ and functions/ is a call this test evaluates, and a real IAM action', async () => {
    const found = sdkCallsInCode();
    expect([...found].sort()).toEqual(Object.keys(CALLERS).sort());
    const evaluated = await evaluate({ principal: 'arn:aws:iam::111111111111:role/x', action: 'cloudwatch:PutMetricDatum', resource: '*' });
    expect(evaluated.decision).toBe('Invalid'); // the catalogue refuses an action that does not exist
  });
});

describe("every run-time call is allowed by AWS's rules, as deployed", () => {
  it.each([
    'single-location#0',
    'multi-location#0',
    'multi-location#1',
    'private-vpc#0',
    'task, endpoints create',
    'task, endpoints existing',
    'task, behind NAT',
  ])(
    '%s',
    async (name) => {
      expect(await refusals(deploy(stacks.get(name)!))).toEqual([]);
    },
    120_000,
  );
});

describe("the operator's `invoke`, with the IAM policy the README gives", () => {
  const readmePolicy = (account: string): Json => {
    const m = /<!-- operator-policy -->\s*```json\n([\s\S]*?)```\s*<!-- \/operator-policy -->/.exec(readFileSync('README.md', 'utf8'));
    expect(m).not.toBeNull();
    return JSON.parse(m![1]!.replaceAll('ACCOUNT', account));
  };

  it.each(['single-location#0', 'task, endpoints create'])(
    '%s: every call `invoke` makes is allowed on the deployed resources',
    async (name) => {
      const t = deploy(stacks.get(name)!);
      const operator = { principal: `arn:aws:iam::${t.account}:role/platform-oncall`, identityPolicies: [readmePolicy(t.account)] };
      const fn = t.ofType('AWS::Lambda::Function')[0]!;
      const calls: Call[] = [{ ...operator, action: 'lambda:InvokeFunction', resource: fn.arn! }];
      const td = t.ofType('AWS::ECS::TaskDefinition')[0];
      if (td) {
        const cluster = t.ofType('AWS::ECS::Cluster')[0]!;
        const container = t.resolve(td.props.ContainerDefinitions[0]);
        const group = t.ofType('AWS::Logs::LogGroup').find((g) => g.name === container.LogConfiguration.Options['awslogs-group'])!;
        calls.push(
          { ...operator, action: 'ecs:ListTaskDefinitionFamilies', resource: '*' },
          { ...operator, action: 'ecs:DescribeTaskDefinition', resource: '*' },
          { ...operator, action: 'ecs:RunTask', resource: td.arn!, context: { 'ecs:cluster': cluster.arn! } },
          ...[td.props.TaskRoleArn, td.props.ExecutionRoleArn].map(
            (r): Call => ({ ...operator, action: 'iam:PassRole', resource: t.resolve(r), context: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } }),
          ),
          { ...operator, action: 'ecs:DescribeTasks', resource: `arn:aws:ecs:${t.region}:${t.account}:task/${cluster.name}/0123456789abcdef0123456789abcdef` },
          { ...operator, action: 'logs:GetLogEvents', resource: `${group.arn!.replace(/:\*$/, '')}:log-stream:task/probe/0123456789abcdef0123456789abcdef` },
        );
        // Every operator call the code makes is among them.
        expect(
          Object.keys(CALLERS)
            .filter((a) => CALLERS[a] === 'operator')
            .every((a) => calls.some((c) => c.action === a)),
        ).toBe(true);
      }
      expect(await expectAllowed(calls)).toEqual([]);
      // And not more than that: another project's function is refused.
      expect(
        (await evaluate({ ...operator, action: 'lambda:InvokeFunction', resource: fn.arn!.replace('function:kube-stream-probe-', 'function:payroll-') }))
          .decision,
      ).toBe('ImplicitlyDenied');
    },
    120_000,
  );
});

describe('private subnets without NAT: every API each runner calls has an endpoint it can reach', () => {
  it.each<[string, 'create' | 'existing']>([
    ['private-vpc#0', 'create'],
    ['task, endpoints create', 'create'],
    ['task, endpoints existing', 'existing'],
  ])('%s', (name, mode) => {
    expect(unreachable(deploy(stacks.get(name)!), mode)).toEqual([]);
  });
});

describe('the cost estimate bills the endpoints the stack creates', () => {
  it.each(['task, endpoints create', 'task, endpoints existing', 'task, behind NAT'])('%s', (name) => {
    const stack = stacks.get(name)!;
    const config = configs.get(stack)!;
    const billed = deploy(stack)
      .ofType('AWS::EC2::VPCEndpoint')
      .filter((e) => e.props.VpcEndpointType === 'Interface')
      .reduce((n, e) => n + e.props.SubnetIds.length, 0);
    expect(estimateMonthlyCost(config, config.locations[0]!).interfaceEndpoints).toBe(billed);
    if (name.endsWith('create')) expect(billed).toBe(6 * 2); // monitoring, secretsmanager, eks, ecr.api, ecr.dkr, logs in 2 subnets
  });
});

describe('the checks fail when a statement or an endpoint is missing (mutations)', () => {
  it("without the CloudWatch statement in the topic policies (CDK's enforceSSL policy alone), no alarm can notify", async () => {
    const t = deploy(stacks.get('single-location#0')!, (template) => {
      for (const r of Object.values<Json>(template.Resources)) {
        if (r.Type === 'AWS::SNS::TopicPolicy')
          r.Properties.PolicyDocument.Statement = r.Properties.PolicyDocument.Statement.filter(
            (s: Json) => s.Principal?.Service !== 'cloudwatch.amazonaws.com',
          );
      }
    });
    const found = await refusals(t);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => /^alarm .*sns:Publish on .* by cloudwatch\.amazonaws\.com: ImplicitlyDenied$/.test(f))).toBe(true);
  }, 120_000);

  it('an alarm of another account is refused (aws:SourceAccount / aws:SourceArn)', async () => {
    const t = deploy(stacks.get('single-location#0')!);
    const topic = t.ofType('AWS::SNS::Topic')[0]!.arn!;
    expect(
      await publishRefusal(t, topic, {
        principal: 'cloudwatch.amazonaws.com',
        context: {
          'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:999999999999:alarm:kube-stream-probe-eu-west-1-public-x',
          'aws:SourceAccount': '999999999999',
        },
      }),
    ).toMatch(/ImplicitlyDenied/);
  });

  // The topics' scope, by the evaluator (not a snapshot): this location's alarms and its own task's rule, no one else.
  const sameAccountAlarm = (t: DeployedTemplate, name: string) => ({
    principal: 'cloudwatch.amazonaws.com',
    context: { 'aws:SourceArn': `arn:aws:cloudwatch:eu-west-1:${t.account}:alarm:${name}`, 'aws:SourceAccount': t.account },
  });
  const otherRule = (t: DeployedTemplate) => ({
    principal: 'events.amazonaws.com',
    context: { 'aws:SourceArn': `arn:aws:events:eu-west-1:${t.account}:rule/someone-elses-rule`, 'aws:SourceAccount': t.account },
  });
  /** The template with the conditions on `key` removed from the topic policies and the topics' key policy (the mutation). */
  const without = (key: string) => (template: Json) => {
    for (const r of Object.values<Json>(template.Resources)) {
      const statements =
        r.Type === 'AWS::SNS::TopicPolicy' ? r.Properties.PolicyDocument.Statement : r.Type === 'AWS::KMS::Key' ? r.Properties.KeyPolicy.Statement : [];
      for (const st of statements)
        for (const [name, op] of Object.entries<Json>(st.Condition ?? {})) {
          delete op[key];
          if (Object.keys(op).length === 0) delete st.Condition[name];
        }
    }
  };

  it("an alarm of this account but not this location's is refused (aws:SourceArn on the alarm names); without that condition it is let in", async () => {
    const stack = stacks.get('single-location#0')!;
    const t = deploy(stack);
    const topic = t.ofType('AWS::SNS::Topic')[0]!.arn!;
    expect(await publishRefusal(t, topic, sameAccountAlarm(t, 'another-project-prod-eu-kubectl-broken'))).toMatch(/ImplicitlyDenied/);
    // This location's own alarms are let in (the check can pass).
    const own = t.ofType('AWS::CloudWatch::Alarm')[0]!;
    expect(
      await publishRefusal(t, topic, { principal: 'cloudwatch.amazonaws.com', context: { 'aws:SourceArn': own.arn!, 'aws:SourceAccount': t.account } }),
    ).toBeUndefined();
    const loose = deploy(stack, without('aws:SourceArn'));
    expect(
      await publishRefusal(loose, loose.ofType('AWS::SNS::Topic')[0]!.arn!, sameAccountAlarm(loose, 'another-project-prod-eu-kubectl-broken')),
    ).toBeUndefined();
  });

  it("an EventBridge rule other than the task's own is refused (aws:SourceArn on the rule); without that condition it is let in", async () => {
    const stack = stacks.get('task, endpoints create')!;
    const t = deploy(stack);
    const topicTargets = (d: DeployedTemplate) =>
      d
        .ofType('AWS::Events::Rule')
        .flatMap((r) => (r.props.Targets ?? []).map((x: Json) => d.resolve(x.Arn) as string))
        .filter((a) => a.startsWith('arn:aws:sns:'));
    const ruleTopics = topicTargets(t);
    expect(ruleTopics.length).toBeGreaterThan(0);
    for (const topic of ruleTopics) expect(await publishRefusal(t, topic, otherRule(t))).toMatch(/ImplicitlyDenied/);
    const loose = deploy(stack, without('aws:SourceArn'));
    const looseTopics = topicTargets(loose);
    expect(await publishRefusal(loose, looseTopics[0]!, otherRule(loose))).toBeUndefined();
  });

  it('the notifier is invoked only by its own rule (aws:SourceArn on the permission): another rule is refused', async () => {
    const t = deploy(stacks.get('single-location#0')!);
    const notifier = t.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.notify')!;
    const rule = t.ofType('AWS::Events::Rule').find((r) => JSON.stringify(t.resolve(r.props.Targets)).includes(notifier.arn!))!;
    const by = (ruleArn: string) => ({ principal: 'events.amazonaws.com', context: { 'aws:SourceArn': ruleArn, 'aws:SourceAccount': t.account } });
    expect(await invokeRefusal(t, notifier.arn!, by(rule.arn!))).toBeUndefined();
    expect(await invokeRefusal(t, notifier.arn!, by(`arn:aws:events:eu-west-1:${t.account}:rule/someone-elses`))).toMatch(/ImplicitlyDenied/);
  });

  it('a service that is no publisher of this location is refused', async () => {
    const t = deploy(stacks.get('single-location#0')!);
    const topic = t.ofType('AWS::SNS::Topic')[0]!.arn!;
    expect(await publishRefusal(t, topic, { principal: 's3.amazonaws.com', context: { 'aws:SourceAccount': t.account } })).toMatch(/ImplicitlyDenied/);
  });

  it('without the ECR dkr endpoint, the task cannot pull its image', () => {
    const t = deploy(stacks.get('task, endpoints create')!, (template) => {
      for (const [id, r] of Object.entries<Json>(template.Resources))
        if (r.Type === 'AWS::EC2::VPCEndpoint' && JSON.stringify(r.Properties.ServiceName).includes('.ecr.dkr')) delete template.Resources[id];
    });
    expect(unreachable(t, 'create')).toEqual([expect.stringMatching(/the task .*: no interface endpoint com\.amazonaws\.eu-west-1\.ecr\.dkr/)]);
  });

  it('without the egress to S3 prefix list, the task cannot fetch the image layers', () => {
    const t = deploy(stacks.get('task, endpoints existing')!, (template) => {
      for (const [id, r] of Object.entries<Json>(template.Resources)) {
        if (r.Type === 'AWS::EC2::SecurityGroup')
          r.Properties.SecurityGroupEgress = (r.Properties.SecurityGroupEgress ?? []).filter((e: Json) => !e.DestinationPrefixListId);
        if (r.Type === 'AWS::EC2::SecurityGroupEgress' && r.Properties.DestinationPrefixListId) delete template.Resources[id];
      }
    });
    expect(unreachable(t, 'existing')).toEqual([expect.stringMatching(/S3's prefix list/)]);
  });

  it("without the task role's access, the task's probe calls are refused", async () => {
    const t = deploy(stacks.get('task, endpoints create')!, (template) => {
      for (const r of Object.values<Json>(template.Resources))
        if (r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes('TaskRole')) r.Properties.PolicyDocument.Statement = [];
    });
    const found = await refusals(t);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/TaskRole.* cloudwatch:PutMetricData \*: ImplicitlyDenied/),
        expect.stringMatching(/TaskRole.* secretsmanager:GetSecretValue .*: ImplicitlyDenied/),
      ]),
    );
  }, 120_000);
});

describe('where it broke, across locations (multi-location.yaml): the notifiers, the page bus and the aggregator, as deployed', () => {
  const crossOf = (mutate?: (template: Json) => void) => {
    const stack = multi.crossLocation!;
    const template = structuredClone(Template.fromStack(stack).toJSON());
    mutate?.(template);
    return deployedTemplate(template, { account: stack.account, region: stack.region, stackName: stack.stackName });
  };
  /** The bus policy as EventBridge builds it from the stack's AWS::Events::EventBusPolicy resources. */
  const busPolicy = (x: DeployedTemplate) => ({
    Version: '2012-10-17',
    Statement: x.ofType('AWS::Events::EventBusPolicy').map((p) => x.resolve(p.props.Statement)),
  });
  const put = (from: { principal: string; identityPolicies: Json[] }, bus: string, x: DeployedTemplate, source = LOCATION_PAGE_SOURCE): Call => ({
    ...from,
    action: 'events:PutEvents',
    resource: bus,
    // Multivalued keys: one value per entry of the call.
    context: { 'events:source': [source], 'events:detail-type': [LOCATION_PAGE_DETAIL_TYPE] },
    resourcePolicy: busPolicy(x),
  });
  const notifierOf = (t: DeployedTemplate) => {
    const fn = t.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.notify')!;
    const roleId = roleByArn(t, t.resolve(fn.props.Role));
    const config = JSON.parse(t.resolve(fn.props.Environment.Variables.KSP_NOTIFY_CONFIG)) as {
      routes: Record<string, { forward?: string; cluster?: string }>;
    };
    return { principal: t.get(roleId).arn!, identityPolicies: rolePolicies(t, roleId), config };
  };

  it("each location's notifier forwards exactly its pages of the shared cluster, to the bus the cross-location stack makes; the bus admits them", async () => {
    const x = crossOf();
    const bus = x.ofType('AWS::Events::EventBus')[0]!.arn!;
    for (const name of ['multi-location#0', 'multi-location#1']) {
      const t = deploy(stacks.get(name)!);
      const n = notifierOf(t);
      const forwarded = Object.values(n.config.routes).filter((r) => r.forward);
      expect(forwarded.map((r) => [r.cluster, r.forward])).toEqual([['shared-gitops', bus]]);
      expect(await expectAllowed([put(n, bus, x)])).toEqual([]);
      // Only our source: the same role cannot put someone else's events there.
      expect((await evaluate(put(n, bus, x, 'com.example.other'))).decision).not.toBe('Allowed');
    }
  });

  it('a notifier in another account is admitted by the bus policy only with the account listed there', async () => {
    const other = '333333333333';
    const from = {
      principal: `arn:aws:iam::${other}:role/notifier`,
      identityPolicies: [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'events:PutEvents', Resource: '*' }] }],
    };
    const x = crossOf();
    const bus = x.ofType('AWS::Events::EventBus')[0]!.arn!;
    expect((await evaluate(put(from, bus, x))).decision).not.toBe('Allowed');
    const admitted = crossOf((template) => {
      for (const r of Object.values<Json>(template.Resources))
        if (r.Type === 'AWS::Events::EventBusPolicy')
          r.Properties.Statement.Principal = { AWS: [r.Properties.Statement.Principal.AWS, `arn:aws:iam::${other}:root`].flat() };
    });
    expect(await expectAllowed([put(from, bus, admitted)])).toEqual([]);
  });

  it("the aggregator: assumed by Lambda, invoked only by its bus's rule, reads and writes its table, delays its decisions, polls them, publishes its pages; its alarms page", async () => {
    const x = crossOf();
    const fn = x.ofType('AWS::Lambda::Function').find((f) => f.props.Handler === 'index.aggregate')!;
    const roleId = roleByArn(x, x.resolve(fn.props.Role));
    const as = (action: string, resource: string): Call => ({ principal: x.get(roleId).arn!, identityPolicies: rolePolicies(x, roleId), action, resource });
    const table = x.ofType('AWS::DynamoDB::Table')[0]!.arn!;
    const queue = x.ofType('AWS::SQS::Queue')[0]!.arn!;
    const own = x.ofType('AWS::Logs::LogGroup').find((g) => g.ref === x.resolve(fn.props.LoggingConfig.LogGroup))!;
    expect(
      await expectAllowed([
        assume(x, roleId, 'lambda.amazonaws.com'),
        as('dynamodb:GetItem', table),
        as('dynamodb:PutItem', table),
        as('sqs:SendMessage', queue),
        // The event source mapping polls the queue with the function's role.
        as('sqs:ReceiveMessage', queue),
        as('sqs:DeleteMessage', queue),
        as('sqs:GetQueueAttributes', queue),
        ...['logs:CreateLogStream', 'logs:PutLogEvents'].map((a) => as(a, `${own.arn!.replace(/:\*$/, '')}:log-stream:2026/12/06/[$LATEST]0123`)),
      ]),
    ).toEqual([]);
    const config = JSON.parse(x.resolve(fn.props.Environment.Variables.KSP_CROSS_LOCATION_CONFIG)) as { topicArn: string; queueUrl: string; table: string };
    expect(config.queueUrl).toBe(x.ofType('AWS::SQS::Queue')[0]!.ref);
    expect(config.table).toBe(x.ofType('AWS::DynamoDB::Table')[0]!.name);
    expect(await publishRefusal(x, config.topicArn, { principal: x.get(roleId).arn!, identityPolicies: rolePolicies(x, roleId) })).toBeUndefined();
    // Only the rule on the page bus may invoke it.
    const rule = x.ofType('AWS::Events::Rule')[0]!;
    expect(rule.arn).toMatch(/:rule\/kube-stream-probe-pages\//);
    const by = (ruleArn: string) => ({ principal: 'events.amazonaws.com', context: { 'aws:SourceArn': ruleArn, 'aws:SourceAccount': x.account } });
    expect(await invokeRefusal(x, fn.arn!, by(rule.arn!))).toBeUndefined();
    expect(await invokeRefusal(x, fn.arn!, by(`arn:aws:events:${x.region}:${x.account}:rule/someone-elses`))).toMatch(/ImplicitlyDenied/);
    // Its own failure pages through CloudWatch's alarm action.
    for (const alarm of x.ofType('AWS::CloudWatch::Alarm'))
      for (const topic of x.resolve(alarm.props.AlarmActions) as string[])
        expect(
          await publishRefusal(x, topic, { principal: 'cloudwatch.amazonaws.com', context: { 'aws:SourceArn': alarm.arn!, 'aws:SourceAccount': x.account } }),
        ).toBeUndefined();
  });
});
