/**
 * /openapi/v3: what kubectl reads to decide how to validate what it sends. kubectl's default
 * `--validate=strict` asks the server to validate (`fieldValidation=Strict`) when the group-version's
 * OpenAPI v3 document has a PATCH operation for the kind (`x-kubernetes-group-version-kind`) taking a
 * `fieldValidation` query parameter (k8s.io/cli-runtime pkg/resource/query_param_verifier_v3.go); without
 * the document it would download the OpenAPI v2 schema and validate client-side. The emulator serves only
 * that much of the API server's documents: the paths of the kinds it stores, their operations' GVK and the
 * parameter. It has no component schemas, so kubectl computes apply's patches from its compiled-in types.
 */
import type { ServerResponse } from 'node:http';
import { gvPath, STORED_KINDS, type StoredKind } from './object-store.js';
import { sendJson, sendStatus } from './status.js';

const FIELD_VALIDATION = {
  name: 'fieldValidation',
  in: 'query',
  description: 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.',
  schema: { type: 'string', uniqueItems: true },
};

/** The document's key for a group-version: "api/v1", "apis/batch/v1". */
const docKey = (k: Pick<StoredKind, 'group' | 'version'>): string => gvPath(k).slice(1);

function gvDocument(key: string, serverVersion: string): Record<string, unknown> | undefined {
  const kinds = STORED_KINDS.filter((k) => docKey(k) === key);
  if (kinds.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const k of kinds) {
    const gvk = { group: k.group, version: k.version, kind: k.kind };
    const base = `${gvPath(k)}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.resource}`;
    const op = (verb: string) => ({
      operationId: `${verb}${k.namespaced ? 'Namespaced' : ''}${k.kind}`,
      'x-kubernetes-action': verb,
      'x-kubernetes-group-version-kind': gvk,
      parameters: verb === 'patch' || verb === 'post' ? [FIELD_VALIDATION] : [],
      responses: { '200': { description: 'OK' } },
    });
    paths[base] = { get: op('list'), post: op('post') };
    paths[`${base}/{name}`] = { get: op('get'), patch: op('patch'), delete: op('delete') };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: serverVersion }, paths, components: { schemas: {} } };
}

/** Serves /openapi/v3 and its group-version documents; false when the path is not one of them. */
export function serveOpenApiV3(path: string, res: ServerResponse, serverVersion: string): boolean {
  if (path === '/openapi/v3') {
    const keys = [...new Set(STORED_KINDS.map(docKey))];
    const paths = Object.fromEntries(keys.map((k) => [k, { serverRelativeURL: `/openapi/v3/${k}?hash=${serverVersion}` }]));
    sendJson(res, 200, { paths });
    return true;
  }
  if (!path.startsWith('/openapi/v3/')) return false;
  const doc = gvDocument(path.slice('/openapi/v3/'.length), serverVersion);
  if (doc) sendJson(res, 200, doc);
  else sendStatus(res, 404, 'the server could not find the requested resource');
  return true;
}

/**
 * /openapi/v2, which kubectl downloads to validate a kind the v3 documents do not have (a custom resource):
 * an empty document (gnostic's openapi_v2.Document in protobuf: swagger "2.0", info, no paths or definitions),
 * so kubectl finds no schema for the kind, skips validating it, and reports what a real server reports when
 * the CRD is missing ("no matches for kind"). The CRD list kubectl reads first is served empty.
 */
export function serveOpenApiV2(path: string, res: ServerResponse, serverVersion: string): boolean {
  if (path === '/apis/apiextensions.k8s.io/v1/customresourcedefinitions') {
    sendJson(res, 200, { kind: 'CustomResourceDefinitionList', apiVersion: 'apiextensions.k8s.io/v1', metadata: { resourceVersion: '1' }, items: [] });
    return true;
  }
  if (path !== '/openapi/v2') return false;
  const field = (tag: number, bytes: Buffer) => Buffer.concat([Buffer.from([(tag << 3) | 2, bytes.length]), bytes]);
  const info = Buffer.concat([field(1, Buffer.from('Kubernetes')), field(2, Buffer.from(serverVersion))]);
  const doc = Buffer.concat([field(1, Buffer.from('2.0')), field(2, info)]);
  res.writeHead(200, { 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'Content-Length': doc.length });
  res.end(doc);
  return true;
}
