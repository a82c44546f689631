/** The Lambda event: optional overrides of the configured plan, validated with field names. */
import { probeError } from '../errors.js';
import {
  DEFAULT_MATRIX,
  HOLD_SHAPES,
  KEEPALIVES,
  OPERATIONS,
  TRANSPORTS,
  parseHolds,
  parseSelection,
  parseSize,
  type HoldShape,
  type KeepaliveMode,
  type Operation,
  type Transport,
} from '../vocabulary.js';

export interface ProbeEvent {
  readonly schedule?: string;
  readonly clusters?: readonly string[];
  readonly operations: readonly Operation[];
  readonly transports: readonly Transport[];
  readonly keepalives: readonly KeepaliveMode[];
  readonly holdsSeconds: readonly number[];
  /** `transfer` ("8MiB"): also stream this many bytes through each operation × transport (the kubectl cp path). */
  readonly transferBytes?: number;
  /** `holdShapes` (["silent","output"]): what moves during exec holds. */
  readonly holdShapes?: readonly HoldShape[];
}

const RULES = { code: 'CONFIG_INVALID', indexed: true } as const;

export function parseProbeEvent(raw: unknown): ProbeEvent {
  const o = raw === undefined || raw === null ? {} : raw;
  if (typeof o !== 'object' || Array.isArray(o)) throw probeError('CONFIG_INVALID', 'the event must be a JSON object (or empty)', { field: 'event' });
  const e = o as Record<string, unknown>;
  const known = new Set(['schedule', 'clusters', 'operations', 'transports', 'keepalives', 'holds', 'transfer', 'holdShapes']);
  for (const k of Object.keys(e))
    if (!known.has(k)) throw probeError('CONFIG_INVALID', `event.${k} is not a known field (${[...known].join(', ')})`, { field: `event.${k}` });
  const listOf = (key: string): readonly unknown[] | undefined => {
    const v = e[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw probeError('CONFIG_INVALID', `event.${key} must be a list`, { field: `event.${key}` });
    return v;
  };
  const pick = <T extends string>(key: string, allowed: readonly T[], fallback: readonly T[]): T[] => {
    const v = listOf(key);
    return v === undefined ? [...fallback] : parseSelection(`event.${key}`, v, allowed, RULES);
  };
  const holds = listOf('holds');
  if (e.clusters !== undefined && (!Array.isArray(e.clusters) || !e.clusters.every((c) => typeof c === 'string'))) {
    throw probeError('CONFIG_INVALID', 'event.clusters must be a list of cluster names', { field: 'event.clusters' });
  }
  // An empty list would probe nothing and answer ok: leave the field out to probe every configured cluster.
  if (Array.isArray(e.clusters) && e.clusters.length === 0)
    throw probeError('CONFIG_INVALID', 'event.clusters is empty: name at least one cluster, or leave it out to probe them all', { field: 'event.clusters' });
  if (e.schedule !== undefined && typeof e.schedule !== 'string')
    throw probeError('CONFIG_INVALID', 'event.schedule must be a string', { field: 'event.schedule' });
  const transferBytes = e.transfer === undefined ? undefined : parseSize('event.transfer', e.transfer, 'CONFIG_INVALID');
  const shapes = listOf('holdShapes');
  return {
    ...(transferBytes ? { transferBytes } : {}),
    ...(shapes === undefined ? {} : { holdShapes: parseSelection('event.holdShapes', shapes, HOLD_SHAPES, RULES) }),
    schedule: e.schedule as string | undefined,
    clusters: e.clusters as string[] | undefined,
    operations: pick('operations', OPERATIONS, DEFAULT_MATRIX.operations),
    transports: pick('transports', TRANSPORTS, DEFAULT_MATRIX.transports),
    keepalives: pick('keepalives', KEEPALIVES, DEFAULT_MATRIX.keepalives),
    holdsSeconds: holds === undefined ? [...DEFAULT_MATRIX.holdsSeconds] : parseHolds('event.holds', holds, RULES),
  };
}
