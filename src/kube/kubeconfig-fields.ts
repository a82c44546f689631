/**
 * Typed readers of a kubeconfig's fields: each names the file and the field it rejects
 * (KUBECONFIG_INVALID) or cannot read (KUBECONFIG_UNREADABLE).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import YAML from 'yaml';
import { probeError } from '../errors.js';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function fail(source: string, field: string, rule: string): never {
  throw probeError('KUBECONFIG_INVALID', `${source}: ${field} ${rule}`, { file: source, field });
}

export function str(o: Obj, key: string, source: string, field: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(source, `${field}.${key}`, `must be a string, not ${typeof v}`);
  return v;
}

export function bool(o: Obj, key: string, source: string, field: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') fail(source, `${field}.${key}`, `must be true or false`);
  return v;
}

export function readText(path: string, source: string, field: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw probeError('KUBECONFIG_UNREADABLE', `${source}: ${field} file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      file: path,
      field,
    });
  }
}

export function decodeData(value: string, source: string, field: string): string {
  if (!/^[A-Za-z0-9+/=\s]*$/.test(value)) fail(source, field, 'is not base64');
  return Buffer.from(value, 'base64').toString('utf8');
}

/** A PEM from `<name>-data` (base64) or `<name>` (a file path). */
export function pem(o: Obj, name: string, dir: string, source: string, field: string): string | undefined {
  const data = str(o, `${name}-data`, source, field);
  if (data) return decodeData(data, source, `${field}.${name}-data`);
  const path = str(o, name, source, field);
  if (path) return readText(isAbsolute(path) ? path : join(dir, path), source, `${field}.${name}`);
  return undefined;
}

export function named(doc: Obj, list: string, item: string, name: string, source: string): Obj {
  const arr = doc[list];
  if (arr !== undefined && arr !== null && !Array.isArray(arr)) fail(source, list, 'must be a list');
  const entry = ((arr as unknown[] | undefined) ?? []).find((e) => isObj(e) && e.name === name);
  if (!entry) fail(source, list, `has no entry named "${name}"`);
  const inner = (entry as Obj)[item];
  if (inner !== undefined && !isObj(inner)) fail(source, `${list}[${name}].${item}`, 'must be a mapping');
  return (inner as Obj | undefined) ?? {};
}

export function parseYaml(text: string, source: string): Obj {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    const e = err as { linePos?: { line: number }[]; message: string };
    throw probeError('KUBECONFIG_INVALID', `${source}: not valid YAML${e.linePos?.[0] ? ` (line ${e.linePos[0].line})` : ''}: ${e.message.split('\n')[0]}`, {
      file: source,
    });
  }
  // An empty file is an empty kubeconfig (kubectl reads it so).
  if (doc === null || doc === undefined) return {};
  if (!isObj(doc)) fail(source, 'the document', 'must be a mapping (apiVersion, clusters, users, contexts)');
  return doc;
}
