/**
 * A synthesized CloudFormation template as it would be once deployed: every
 * Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select/Split and pseudo parameter
 * resolved to the value CloudFormation would give it in one account and region,
 * so policies can be evaluated against real-looking ARNs (the IAM authority
 * test) instead of logical ids.
 *
 * What each Ref and Arn returns is CloudFormation's documented return value per
 * resource type (docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/
 * aws-resource-<service>-<type>.html, "Return values"); resources without an
 * explicit name get one shaped like CloudFormation's (<stack>-<logicalId>-<suffix>).
 */
import { createHash } from 'node:crypto';

type Json = any;

export interface DeployedResource {
  readonly logicalId: string;
  readonly type: string;
  readonly props: Json;
  /** The physical name (explicit or generated). */
  readonly name: string;
  readonly ref: string;
  readonly arn: string | undefined;
}

export interface DeployedTemplate {
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  readonly resources: Map<string, DeployedResource>;
  /** Resolves any template value (intrinsics included) to plain JSON. */
  resolve(v: Json): Json;
  ofType(type: string): DeployedResource[];
  get(logicalId: string): DeployedResource;
}

const suffix = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 12).toUpperCase();

/** The property holding a resource's explicit name, per type. */
const NAME_PROPS: Record<string, string> = {
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::ECS::Cluster': 'ClusterName',
  'AWS::Events::Rule': 'Name',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::CompositeAlarm': 'AlarmName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::Scheduler::ScheduleGroup': 'Name',
  'AWS::Scheduler::Schedule': 'Name',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::ECS::TaskDefinition': 'Family',
  'AWS::Events::EventBus': 'Name',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::SQS::Queue': 'QueueName',
};

export function deployedTemplate(template: Json, env: { account: string; region: string; stackName: string; partition?: string }): DeployedTemplate {
  const partition = env.partition ?? 'aws';
  const { account, region } = env;
  const pseudo: Record<string, string> = {
    'AWS::AccountId': account,
    'AWS::Region': region,
    'AWS::Partition': partition,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': env.stackName,
    'AWS::NoValue': '',
  };
  const raw: Record<string, Json> = template.Resources;
  const resources = new Map<string, DeployedResource>();

  const nameOf = (id: string): string => {
    const r = raw[id];
    const explicit = r.Properties?.[NAME_PROPS[r.Type] ?? ''];
    if (explicit !== undefined) return String(resolve(explicit));
    // CloudFormation: stack name, logical id (both truncated) and a random suffix.
    return `${env.stackName.slice(0, 20)}-${id.slice(0, 20)}-${suffix(id)}`;
  };
  const arnOf = (id: string, name: string): string | undefined => {
    const a = (service: string, resource: string, r = region) => `arn:${partition}:${service}:${r}:${account}:${resource}`;
    switch (raw[id].Type) {
      case 'AWS::SNS::Topic':
        return a('sns', name);
      case 'AWS::KMS::Key':
        return a('kms', `key/${keyId(id)}`);
      case 'AWS::IAM::Role':
        return `arn:${partition}:iam::${account}:role/${name}`;
      case 'AWS::Lambda::Function':
        return a('lambda', `function:${name}`);
      case 'AWS::Logs::LogGroup':
        return a('logs', `log-group:${name}:*`);
      case 'AWS::ECS::Cluster':
        return a('ecs', `cluster/${name}`);
      case 'AWS::ECS::TaskDefinition':
        return a('ecs', `task-definition/${name}:1`);
      case 'AWS::Events::Rule': {
        // A rule on a custom bus: rule/BUS/NAME (EventBridge's ARN format for it).
        const bus = raw[id].Properties?.EventBusName;
        return a('events', bus === undefined || resolve(bus) === 'default' ? `rule/${name}` : `rule/${resolve(bus)}/${name}`);
      }
      case 'AWS::Events::EventBus':
        return a('events', `event-bus/${name}`);
      case 'AWS::DynamoDB::Table':
        return a('dynamodb', `table/${name}`);
      case 'AWS::SQS::Queue':
        return a('sqs', name);
      case 'AWS::Scheduler::ScheduleGroup':
        return a('scheduler', `schedule-group/${name}`);
      case 'AWS::Scheduler::Schedule':
        return a('scheduler', `schedule/${resolve(raw[id].Properties.GroupName ?? 'default')}/${name}`);
      case 'AWS::CloudWatch::Alarm':
      case 'AWS::CloudWatch::CompositeAlarm':
        return a('cloudwatch', `alarm:${name}`);
      case 'AWS::CloudWatch::Dashboard':
        return `arn:${partition}:cloudwatch::${account}:dashboard/${name}`;
      default:
        return undefined;
    }
  };
  const keyId = (id: string) => {
    const h = createHash('sha256').update(id).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  };
  const refOf = (id: string, name: string, arn: string | undefined): string => {
    switch (raw[id].Type) {
      case 'AWS::SNS::Topic':
      case 'AWS::ECS::TaskDefinition':
        return arn!;
      case 'AWS::KMS::Key':
        return keyId(id);
      case 'AWS::EC2::SecurityGroup':
        return `sg-${suffix(id).toLowerCase()}`;
      case 'AWS::EC2::VPCEndpoint':
        return `vpce-${suffix(id).toLowerCase()}`;
      case 'AWS::SQS::Queue':
        return `https://sqs.${region}.amazonaws.com/${account}/${name}`;
      default:
        return name;
    }
  };
  const entry = (id: string): DeployedResource => {
    const have = resources.get(id);
    if (have) return have;
    if (!raw[id]) throw new Error(`no resource ${id} in the template`);
    const name = nameOf(id);
    const arn = arnOf(id, name);
    const r: DeployedResource = { logicalId: id, type: raw[id].Type, props: raw[id].Properties ?? {}, name, arn, ref: refOf(id, name, arn) };
    resources.set(id, r);
    return r;
  };
  const getAtt = (id: string, attr: string): string => {
    const r = entry(id);
    if (attr === 'Arn' || attr === 'TopicArn' || attr === 'TaskDefinitionArn') return r.arn ?? `arn:${partition}:unknown:${region}:${account}:${id}`;
    if (attr === 'GroupId') return r.ref;
    if (attr === 'TopicName' || attr === 'QueueName' || attr === 'Name') return r.name;
    if (attr === 'QueueUrl') return r.ref;
    throw new Error(`unsupported Fn::GetAtt ${id}.${attr}`);
  };
  const sub = (text: string, vars: Record<string, Json> = {}): string =>
    text.replace(/\$\{([^}]+)\}/g, (_m, key: string) => {
      if (key in vars) return String(resolve(vars[key]));
      if (key in pseudo) return pseudo[key]!;
      const [id, attr] = key.split('.');
      return attr ? getAtt(id!, attr) : entry(id!).ref;
    });
  function resolve(v: Json): Json {
    if (Array.isArray(v)) return v.map(resolve);
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v);
    if (keys.length === 1) {
      const [k] = keys as [string];
      const a = v[k];
      if (k === 'Ref') return pseudo[a] ?? (template.Parameters?.[a] ? (template.Parameters[a].Default ?? `param:${a}`) : entry(a).ref);
      if (k === 'Fn::GetAtt') return getAtt(a[0], a[1]);
      if (k === 'Fn::Join') return (resolve(a[1]) as Json[]).join(a[0]);
      if (k === 'Fn::Sub') return typeof a === 'string' ? sub(a) : sub(a[0], a[1]);
      if (k === 'Fn::Select') return (resolve(a[1]) as Json[])[Number(resolve(a[0]))];
      if (k === 'Fn::Split') return String(resolve(a[1])).split(a[0]);
      if (k.startsWith('Fn::')) throw new Error(`unsupported intrinsic ${k}`);
    }
    return Object.fromEntries(keys.map((k) => [k, resolve(v[k])]));
  }
  for (const id of Object.keys(raw)) entry(id);
  return {
    account,
    region,
    partition,
    resources,
    resolve,
    ofType: (type) => [...resources.values()].filter((r) => r.type === type),
    get: entry,
  };
}
