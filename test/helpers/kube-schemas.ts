/**
 * The emulator's ObjectSchema from maintained packages generated from Kubernetes' OpenAPI: which fields exist
 * from @kubernetes/client-node's models (each class's attribute map, generated from the spec), what is valid
 * (types, required fields, enums) from kubernetes-models' schemas. So `kubectl apply` against the emulator is
 * refused for an unknown field under `fieldValidation=Strict`, as a real API server refuses it.
 */
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { Service } from 'kubernetes-models/v1/Service';
import * as k8s from '@kubernetes/client-node';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { FieldIssue, ObjectSchema } from '../../lab/emulator/object-store.js';

type Attr = { baseName: string; type: string };
const CLASSES = k8s as unknown as Record<string, { getAttributeTypeMap?: () => Attr[] } | undefined>;
/** kubernetes-models' model of each kind `manifest` writes (the PrometheusRule: prometheus-operator's CRD schema). */
const MODELS: Record<string, new (d: any) => { validate(): void }> = {
  PrometheusRule,
  ServiceMonitor,
  Deployment,
  Service,
  NetworkPolicy,
  Namespace,
  ConfigMap,
  ServiceAccount,
  StatefulSet,
  DaemonSet,
  CronJob,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
};

/** Validates a document against its kind's schema; throws kubernetes-models' ValidationError (or for a kind it has none of). */
export function validateDocument(d: { kind: string }): void {
  const Model = MODELS[d.kind];
  if (!Model) throw new Error(`no schema for kind ${d.kind}`);
  new Model(d).validate();
}

/** The kubelet's $(VAR) expansion of a container's args from its environment (unknown references stay as written). */
export function expandArgs(args: readonly string[], env: Readonly<Record<string, string>>): string[] {
  return args.map((a) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields of `value` that `type` (a client-node type name) does not define, in the API server's path syntax. */
function unknownIn(value: unknown, type: string, path: string, out: string[]): void {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownIn(v, array[1]!, `${path}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (isObject(value)) for (const [k, v] of Object.entries(value)) unknownIn(v, map[1]!, `${path}.${k}`, out);
    return;
  }
  const attrs = CLASSES[type]?.getAttributeTypeMap?.();
  if (!attrs || !isObject(value)) return; // a scalar, IntOrString, any: nothing to walk
  for (const [k, v] of Object.entries(value)) {
    const attr = attrs.find((a) => a.baseName === k);
    const p = path ? `${path}.${k}` : k;
    if (!attr) out.push(p);
    else unknownIn(v, attr.type, p, out);
  }
}

/** ajv's instancePath (/spec/containers/0/image) as the API server writes a field (spec.containers[0].image). */
const fieldPath = (instancePath: string): string =>
  instancePath
    .split('/')
    .filter(Boolean)
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');

export const KUBERNETES_SCHEMA: ObjectSchema = {
  unknownFields(kind, obj) {
    const type = `V1${kind.kind}`;
    if (!CLASSES[type]?.getAttributeTypeMap) return undefined;
    const out: string[] = [];
    unknownIn(obj, type, '', out);
    return out;
  },
  invalid(kind, obj) {
    const Model = MODELS[kind.kind];
    if (!Model) return [];
    try {
      new Model(obj).validate();
      return [];
    } catch (err) {
      const errors = (err as { errors?: { instancePath: string; message?: string; params?: Record<string, unknown> }[] }).errors;
      if (!errors) throw err;
      return errors.map((e): FieldIssue => {
        const at = fieldPath(e.instancePath);
        const missing = e.params?.missingProperty;
        if (typeof missing === 'string') return { field: at ? `${at}.${missing}` : missing, detail: 'Required value' };
        return { field: at, detail: `Invalid value: ${e.message ?? 'invalid'}` };
      });
    }
  },
};
