/**
 * A loopback stand-in for the AWS endpoints the Lambda calls, so the real
 * @aws-sdk clients can be exercised without AWS: CloudWatch PutMetricData
 * (AWS JSON 1.0), Secrets Manager GetSecretValue (AWS JSON 1.1) and EKS
 * DescribeCluster (REST JSON). It decodes and records every call (with the
 * region it was signed for), and rejects what AWS rejects: an unsigned call,
 * a call signed for another service, a secret asked for outside its ARN's
 * region, a cluster asked for outside its region. It can be told to fail the
 * next CloudWatch calls. CloudWatch Logs FilterLogEvents (the notifier's
 * evidence, with the JSON filter patterns it writes) and SNS Publish (Query
 * protocol, with SNS's subject rules) as a function calls them. SNS, as
 * services publish to it (an alarm action, a rule target), is
 * test/helpers/local-sns.ts: it delivers only what the deployed topic and key
 * policies admit. The cross-location aggregator's calls: EventBridge PutEvents (a bus only in its own region),
 * DynamoDB GetItem/PutItem, SQS SendMessage (DelaySeconds 0-900, the body's MD5 the SDK checks).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';

export interface RecordedPut {
  readonly namespace: string;
  readonly metricData: Array<{ MetricName: string; Unit?: string; Value?: number; Dimensions?: Array<{ Name: string; Value: string }>; Timestamp?: number }>;
}

export interface TaskDefinitionStub {
  readonly arn: string;
  readonly family: string;
  readonly container: {
    name: string;
    environment: { name: string; value: string }[];
    logConfiguration: { logDriver: string; options: Record<string, string> };
  };
}

export interface LocalAws {
  readonly url: string;
  readonly puts: RecordedPut[];
  readonly calls: string[];
  /** Responses for the next PutMetricData calls: 'throttle' (400 Throttling) or 'error' (500). */
  failNext(...kinds: Array<'throttle' | 'error'>): void;
  failAlways(kind: 'throttle' | 'error' | undefined): void;
  secrets: Map<string, string>;
  /** ECS task definitions by family (the task runner's). */
  taskDefinitions: Map<string, TaskDefinitionStub>;
  /** Runs a started task with its environment (definition + overrides); resolves with its log lines. */
  onRunTask?: (env: Record<string, string>) => Promise<string[]>;
  /** EKS clusters by name; `region` (default any) is where DescribeCluster finds it. */
  clusters: Map<string, { caData: string; region?: string }>;
  /** Lambda Invoke (REST JSON): what the "function" returns. */
  onInvoke?: (functionName: string, payload: unknown) => Promise<{ payload: unknown; functionError?: string }>;
  /** CloudWatch Logs log groups and their events (FilterLogEvents reads them). */
  logGroups: Map<string, { timestamp: number; message: string }[]>;
  /** FilterLogEvents answers with at most this many events a page (to exercise nextToken). @default 10000 */
  logsPageSize: number;
  /** SNS Publish: what was published (Query protocol, as the SDK sends it). */
  published: { topicArn: string; subject?: string; message: string }[];
  /** EventBridge buses by ARN (PutEvents must be signed for the bus's region), and the events put on them. */
  buses: Set<string>;
  events: { bus: string; source: string; detailType: string; detail: unknown }[];
  /** DynamoDB tables by name (GetItem, PutItem), items by their `cluster` key. */
  tables: Map<string, Map<string, Record<string, unknown>>>;
  /** SQS SendMessage (AWS JSON 1.0): what was sent, to which queue URL, delayed how long. */
  sent: { queueUrl: string; body: string; delaySeconds: number }[];
  close(): Promise<void>;
}

/**
 * CloudWatch Logs' JSON filter pattern, the subset the notifier writes: `{ $.a = "x" && $.b = "y" }` (string
 * equality on top-level fields, joined by &&). Anything else is refused as InvalidParameterException, so a pattern
 * this stand-in cannot judge never passes silently (the syntax: CloudWatch Logs "Filter pattern syntax", JSON).
 */
function jsonFilter(pattern: string): ((message: string) => boolean) | undefined {
  const m = /^\{\s*(.+?)\s*\}$/.exec(pattern.trim());
  if (!m) return undefined;
  const terms = m[1]!.split(/\s*&&\s*/).map((t) => /^\$\.([A-Za-z_][\w]*)\s*=\s*"([^"]*)"$/.exec(t));
  if (terms.some((t) => !t)) return undefined;
  return (message) => {
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(message);
    } catch {
      return false;
    }
    return terms.every((t) => o[t![1]!] === t![2]);
  };
}

export async function startLocalAws(): Promise<LocalAws> {
  const puts: RecordedPut[] = [];
  const calls: string[] = [];
  const queue: Array<'throttle' | 'error'> = [];
  let always: 'throttle' | 'error' | undefined;
  const secrets = new Map<string, string>();
  const clusters = new Map<string, { caData: string; region?: string }>();
  const taskDefinitions = new Map<string, TaskDefinitionStub>();
  const tasks = new Map<string, { arn: string; id: string; status: string; lines: string[]; network: unknown }>();
  const logGroups = new Map<string, { timestamp: number; message: string }[]>();
  const published: LocalAws['published'] = [];
  const buses = new Set<string>();
  const events: LocalAws['events'] = [];
  const tables: LocalAws['tables'] = new Map();
  const sent: LocalAws['sent'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The SDK gzips large request bodies (PutMetricData compresses above 10 KiB), as AWS accepts them.
      const raw = Buffer.concat(chunks);
      const body = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      const target = String(req.headers['x-amz-target'] ?? '');
      // SigV4: Credential=AKID/DATE/REGION/SERVICE/aws4_request; the scope says where the client thinks it is talking.
      const scope = /^AWS4-HMAC-SHA256 Credential=[A-Z0-9]+\/\d{8}\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request,/.exec(String(req.headers.authorization ?? ''));
      const signed = scope !== null;
      const region = scope?.[1] ?? '';
      const service = scope?.[2] ?? '';
      const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0', ...headers });
        res.end(JSON.stringify(json));
      };
      if (!signed) return send(403, { __type: 'MissingAuthenticationToken', message: 'not signed' });
      const wrongService = (want: string) =>
        service !== want && send(403, { __type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${want}'.` });
      if (target === 'GraniteServiceVersion20100801.PutMetricData') {
        if (wrongService('monitoring')) return;
        calls.push(`PutMetricData ${region}`);
        const kind = queue.shift() ?? always;
        if (kind === 'throttle') return send(400, { __type: 'Throttling', message: 'Rate exceeded' }, { 'x-amzn-query-error': 'Throttling;Sender' });
        if (kind === 'error')
          return send(500, { __type: 'InternalServiceError', message: 'internal failure' }, { 'x-amzn-query-error': 'InternalServiceError;Receiver' });
        const input = JSON.parse(body) as { Namespace: string; MetricData: RecordedPut['metricData'] };
        puts.push({ namespace: input.Namespace, metricData: input.MetricData });
        return send(200, {});
      }
      if (target === 'secretsmanager.GetSecretValue') {
        if (wrongService('secretsmanager')) return;
        calls.push(`GetSecretValue ${region}`);
        const id = (JSON.parse(body) as { SecretId: string }).SecretId;
        const value = secrets.get(id);
        // A secret lives in one region: asked for anywhere else, AWS cannot find it.
        const inRegion = !id.startsWith('arn:') || id.split(':')[3] === region;
        if (value === undefined || !inRegion)
          return send(400, { __type: 'ResourceNotFoundException', Message: 'Secrets Manager can’t find the specified secret.' });
        return send(200, { ARN: id, Name: id.split(':').pop(), SecretString: value, VersionId: 'v1' });
      }
      // ECS (the task runner): task definitions the test registers, RunTask running api.onRunTask, DescribeTasks.
      const ecsOp = /^AmazonEC2ContainerServiceV20141113\.(\w+)$/.exec(target)?.[1];
      if (ecsOp) {
        if (wrongService('ecs')) return;
        calls.push(`${ecsOp} ${region}`);
        const input = JSON.parse(body || '{}');
        if (ecsOp === 'ListTaskDefinitionFamilies')
          return send(200, { families: [...taskDefinitions.keys()].filter((f) => f.startsWith(input.familyPrefix ?? '')) });
        if (ecsOp === 'DescribeTaskDefinition') {
          const td = taskDefinitions.get(String(input.taskDefinition).split('/').pop()!.split(':')[0]!);
          if (!td) return send(400, { __type: 'ClientException', message: 'Unable to describe task definition.' });
          return send(200, { taskDefinition: { taskDefinitionArn: td.arn, family: td.family, containerDefinitions: [td.container] } });
        }
        if (ecsOp === 'RunTask') {
          const td = [...taskDefinitions.values()].find((t) => t.arn === input.taskDefinition);
          if (!td || !api.onRunTask) return send(400, { __type: 'InvalidParameterException', message: 'TaskDefinition not found.' });
          const id = `t${tasks.size + 1}0000000000000000000000000000`;
          const arn = `arn:aws:ecs:${region}:123456789012:task/${input.cluster}/${id}`;
          const env: Record<string, string> = Object.fromEntries(td.container.environment.map((e) => [e.name, e.value]));
          for (const o of input.overrides?.containerOverrides ?? []) for (const e of o.environment ?? []) env[e.name] = e.value;
          const task = { arn, id, status: 'PROVISIONING', lines: [] as string[], network: input.networkConfiguration };
          tasks.set(id, task);
          void api.onRunTask(env).then((lines) => {
            task.lines = lines;
            task.status = 'STOPPED';
          });
          task.status = 'RUNNING';
          return send(200, { tasks: [{ taskArn: arn, lastStatus: 'PROVISIONING' }], failures: [] });
        }
        if (ecsOp === 'DescribeTasks') {
          return send(200, {
            tasks: (input.tasks as string[])
              .map((a) => tasks.get(a.split('/').pop()!))
              .filter(Boolean)
              .map((t) => ({ taskArn: t!.arn, lastStatus: t!.status })),
          });
        }
      }
      if (target === 'Logs_20140328.FilterLogEvents') {
        if (wrongService('logs')) return;
        calls.push(`FilterLogEvents ${region}`);
        const input = JSON.parse(body) as { logGroupName: string; startTime?: number; endTime?: number; filterPattern?: string; nextToken?: string };
        const events = logGroups.get(input.logGroupName);
        if (!events) return send(400, { __type: 'ResourceNotFoundException', message: 'The specified log group does not exist.' });
        const match = input.filterPattern ? jsonFilter(input.filterPattern) : () => true;
        if (!match) return send(400, { __type: 'InvalidParameterException', message: `Invalid filter pattern: ${input.filterPattern}` });
        const all = events
          .filter((e) => (input.startTime === undefined || e.timestamp >= input.startTime) && (input.endTime === undefined || e.timestamp <= input.endTime))
          .filter((e) => match(e.message));
        const from = input.nextToken ? Number(input.nextToken) : 0;
        const page = all.slice(from, from + api.logsPageSize);
        const next = from + page.length < all.length ? String(from + page.length) : undefined;
        return send(200, {
          events: page.map((e, i) => ({
            logStreamName: 'probe',
            timestamp: e.timestamp,
            message: e.message,
            ingestionTime: e.timestamp,
            eventId: String(from + i),
          })),
          ...(next ? { nextToken: next } : {}),
        });
      }
      if (req.method === 'POST' && String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        // SNS (AWS Query protocol): Publish, with SNS's own checks on the subject.
        if (wrongService('sns')) return;
        const form = new URLSearchParams(body);
        const xml = (status: number, text: string) => {
          res.writeHead(status, { 'Content-Type': 'text/xml' });
          res.end(text);
        };
        const fault = (code: string, message: string) =>
          xml(
            400,
            `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
          );
        if (form.get('Action') !== 'Publish') return fault('InvalidAction', `${form.get('Action')} is not modelled`);
        calls.push(`Publish ${region}`);
        const topicArn = form.get('TopicArn') ?? '';
        const subject = form.get('Subject') ?? undefined;
        const message = form.get('Message') ?? '';
        if (!/^arn:aws[\w-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/.test(topicArn)) return fault('InvalidParameter', 'Invalid parameter: TopicArn');
        // SNS: "Subjects must be UTF-8 text with no line breaks or control characters, and less than 100 characters long."
        if (subject !== undefined && (subject.length >= 100 || /[\u0000-\u001f]/.test(subject))) return fault('InvalidParameter', 'Invalid parameter: Subject');
        if (!message) return fault('InvalidParameter', 'Invalid parameter: Empty message');
        published.push({ topicArn, subject, message });
        return xml(
          200,
          `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m${published.length}</MessageId></PublishResult><ResponseMetadata><RequestId>r${published.length}</RequestId></ResponseMetadata></PublishResponse>`,
        );
      }
      if (target === 'Logs_20140328.GetLogEvents') {
        if (wrongService('logs')) return;
        calls.push(`GetLogEvents ${region}`);
        const input = JSON.parse(body);
        const task = tasks.get(String(input.logStreamName).split('/').pop()!);
        if (!task) return send(400, { __type: 'ResourceNotFoundException', message: 'The specified log stream does not exist.' });
        if (input.nextToken === 'f/end') return send(200, { events: [], nextForwardToken: 'f/end' });
        return send(200, {
          events: task.lines.map((m, i) => ({ timestamp: Date.now(), message: m, ingestionTime: Date.now() + i })),
          nextForwardToken: 'f/end',
        });
      }
      if (target === 'AWSEvents.PutEvents') {
        if (wrongService('events')) return;
        calls.push(`PutEvents ${region}`);
        const input = JSON.parse(body) as { Entries: { EventBusName?: string; Source?: string; DetailType?: string; Detail?: string }[] };
        const entries = input.Entries.map((e) => {
          const bus = e.EventBusName ?? 'default';
          // A bus is found by its ARN only in its own region (EventBridge's endpoints are regional).
          if (!buses.has(bus) || bus.split(':')[3] !== region)
            return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `Event bus ${bus} does not exist.` };
          let detail: unknown;
          try {
            detail = JSON.parse(e.Detail ?? '');
          } catch {
            return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
          }
          if (!e.Source || !e.DetailType || typeof detail !== 'object' || Buffer.byteLength(JSON.stringify(e)) > 256 * 1024)
            return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Parameter(s) Source, DetailType or Detail is not valid.' };
          events.push({ bus, source: e.Source, detailType: e.DetailType, detail });
          return { EventId: `ev-${events.length}` };
        });
        return send(200, { FailedEntryCount: entries.filter((e) => 'ErrorCode' in e).length, Entries: entries });
      }
      if (target === 'DynamoDB_20120810.GetItem' || target === 'DynamoDB_20120810.PutItem') {
        if (wrongService('dynamodb')) return;
        const op = target.split('.')[1]!;
        calls.push(`${op} ${region}`);
        const input = JSON.parse(body) as {
          TableName: string;
          Key?: { cluster?: { S?: string } };
          Item?: Record<string, { S?: string; N?: string }>;
          ConditionExpression?: string;
          ExpressionAttributeNames?: Record<string, string>;
          ExpressionAttributeValues?: Record<string, { S?: string; N?: string }>;
        };
        const table = tables.get(input.TableName);
        if (!table) return send(400, { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Requested resource not found' });
        const key = (op === 'GetItem' ? input.Key?.cluster?.S : input.Item?.cluster?.S) ?? '';
        if (!key) return send(400, { __type: 'com.amazon.coral.validate#ValidationException', message: 'One of the required keys was not given a value' });
        if (op === 'PutItem') {
          // The two conditions the aggregator writes (DynamoDB's condition expression syntax); any other is refused.
          const cond = input.ConditionExpression;
          const have = table.get(key) as Record<string, { N?: string }> | undefined;
          let holds = true;
          if (cond === 'attribute_not_exists(cluster)') holds = have === undefined;
          else if (cond !== undefined) {
            const m = /^(#\w+) = (:\w+)$/.exec(cond);
            const attr = m ? input.ExpressionAttributeNames?.[m[1]!] : undefined;
            const want = m ? input.ExpressionAttributeValues?.[m[2]!] : undefined;
            if (!attr || !want) return send(400, { __type: 'com.amazon.coral.validate#ValidationException', message: `Invalid ConditionExpression: ${cond}` });
            holds = have?.[attr]?.N !== undefined && have[attr]!.N === want.N;
          }
          if (!holds)
            return send(400, { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'The conditional request failed' });
          table.set(key, input.Item!);
          return send(200, {});
        }
        const item = table.get(key);
        return send(200, item ? { Item: item } : {});
      }
      if (target === 'AmazonSQS.SendMessage') {
        if (wrongService('sqs')) return;
        calls.push(`SendMessage ${region}`);
        const input = JSON.parse(body) as { QueueUrl: string; MessageBody: string; DelaySeconds?: number };
        const delaySeconds = input.DelaySeconds ?? 0;
        if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > 900)
          return send(400, {
            __type: 'com.amazonaws.sqs#InvalidParameterValue',
            message: `Value ${delaySeconds} for parameter DelaySeconds is invalid. Reason: must be between 0 and 900.`,
          });
        sent.push({ queueUrl: input.QueueUrl, body: input.MessageBody, delaySeconds });
        // The SDK checks this digest of the body (MD5OfMessageBody), as SQS returns it.
        return send(200, { MessageId: `m-${sent.length}`, MD5OfMessageBody: createHash('md5').update(input.MessageBody).digest('hex') });
      }
      const inv = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? '');
      if (req.method === 'POST' && inv) {
        const name = decodeURIComponent(inv[1]!);
        if (wrongService('lambda')) return;
        calls.push(`Invoke ${name}`);
        if (!api.onInvoke) return send(404, { Type: 'User', message: `Function not found: ${name}` }, { 'x-amzn-errortype': 'ResourceNotFoundException' });
        void api.onInvoke(name, body ? JSON.parse(body) : undefined).then((r) => {
          res.writeHead(200, { 'Content-Type': 'application/json', ...(r.functionError ? { 'X-Amz-Function-Error': r.functionError } : {}) });
          res.end(JSON.stringify(r.payload));
        });
        return;
      }
      const m = /^\/clusters\/([^/?]+)/.exec(req.url ?? '');
      if (req.method === 'GET' && m) {
        if (wrongService('eks')) return;
        calls.push(`DescribeCluster ${region}`);
        const found = clusters.get(decodeURIComponent(m[1]!));
        const c = found && (!found.region || found.region === region) ? found : undefined;
        if (!c) return send(404, { message: 'No cluster found' }, { 'x-amzn-errortype': 'ResourceNotFoundException' });
        return send(200, { cluster: { name: m[1], status: 'ACTIVE', certificateAuthority: { data: c.caData } } });
      }
      calls.push(`unknown ${req.method} ${req.url} ${target}`);
      send(400, { __type: 'UnknownOperationException' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const api: LocalAws = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    puts,
    calls,
    failNext: (...kinds) => queue.push(...kinds),
    failAlways: (kind) => (always = kind),
    secrets,
    clusters,
    taskDefinitions,
    logGroups,
    logsPageSize: 10_000,
    published,
    buses,
    events,
    tables,
    sent,
    close: () => new Promise((r) => server.close(() => r())),
  };
  return api;
}
