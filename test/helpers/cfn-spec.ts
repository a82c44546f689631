/**
 * Checks a synthesized template against the CloudFormation resource
 * specification as AWS CDK's own service spec ships it (@aws-cdk/aws-service-spec,
 * the database CDK generates its L1 classes from): every resource type exists,
 * every property name exists on its type (nested property types too), every
 * required property is present, and every value has the spec's type. Intrinsic
 * functions stand for any value of the expected type. The spec carries no enum
 * value lists, so enums are not checked here.
 */
import { createRequire } from 'node:module';

type Json = any;
type Spec = Json;

const require = createRequire(import.meta.url);
let db: Spec | undefined;
const spec = (): Spec => (db ??= require('@aws-cdk/aws-service-spec').loadAwsServiceSpecSync());

const isIntrinsic = (v: Json) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && /^(Ref|Fn::[A-Za-z]+|Condition)$/.test(Object.keys(v)[0]!);

function checkValue(type: Json, v: Json, path: string, problems: string[]): void {
  if (isIntrinsic(v)) return;
  switch (type.type) {
    case 'string':
    case 'date-time':
      if (typeof v !== 'string') problems.push(`${path}: expected a string, got ${JSON.stringify(v)?.slice(0, 60)}`);
      return;
    case 'number':
      if (typeof v !== 'number' && !(typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)))) problems.push(`${path}: expected a number`);
      return;
    case 'integer':
      if (!Number.isInteger(typeof v === 'string' ? Number(v) : v)) problems.push(`${path}: expected an integer, got ${JSON.stringify(v)}`);
      return;
    case 'boolean':
      if (typeof v !== 'boolean' && v !== 'true' && v !== 'false') problems.push(`${path}: expected a boolean, got ${JSON.stringify(v)}`);
      return;
    case 'json':
      return;
    case 'tag':
      if (typeof v !== 'object' || typeof v.Key !== 'string' || !('Value' in v)) problems.push(`${path}: expected a {Key, Value} tag`);
      return;
    case 'array':
      if (!Array.isArray(v)) problems.push(`${path}: expected a list`);
      else v.forEach((x, i) => checkValue(type.element, x, `${path}[${i}]`, problems));
      return;
    case 'map':
      if (typeof v !== 'object' || Array.isArray(v)) problems.push(`${path}: expected a map`);
      else for (const [k, x] of Object.entries(v)) checkValue(type.element, x, `${path}.${k}`, problems);
      return;
    case 'union': {
      const attempts = type.types.map((t: Json) => {
        const p: string[] = [];
        checkValue(t, v, path, p);
        return p;
      });
      if (!attempts.some((p: string[]) => p.length === 0)) problems.push(...attempts[0]);
      return;
    }
    case 'ref': {
      const def = spec().get('typeDefinition', type.reference.$ref);
      if (typeof v !== 'object' || Array.isArray(v) || v === null) {
        problems.push(`${path}: expected a ${def.name} object`);
        return;
      }
      checkProperties(def.properties, v, path, problems, def.name);
      return;
    }
    default:
      problems.push(`${path}: the spec's type ${type.type} is not understood by this check`);
  }
}

function checkProperties(props: Record<string, Json>, value: Json, path: string, problems: string[], what: string): void {
  for (const [name, p] of Object.entries(props)) if (p.required && value[name] === undefined) problems.push(`${path}: ${what} requires ${name}`);
  for (const [name, v] of Object.entries(value)) {
    const p = props[name];
    if (!p) {
      problems.push(`${path}.${name}: ${what} has no property ${name}`);
      continue;
    }
    checkValue(p.type, v, `${path}.${name}`, problems);
  }
}

/** Every problem of the template's resources against the specification (empty when it conforms). */
export function specProblems(template: Json): string[] {
  const problems: string[] = [];
  for (const [id, r] of Object.entries<Json>(template.Resources ?? {})) {
    if (r.Type.startsWith('Custom::') || r.Type === 'AWS::CloudFormation::CustomResource') continue;
    const resource = spec().lookup('resource', 'cloudFormationType', 'equals', r.Type);
    if (resource.length === 0) {
      problems.push(`${id}: no resource type ${r.Type} in the specification`);
      continue;
    }
    checkProperties(resource.only().properties, r.Properties ?? {}, id, problems, r.Type);
  }
  return problems;
}
