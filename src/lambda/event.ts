/** The Lambda event: optional overrides of the configured plan, validated with field names. */
import { parseDurationSeconds } from '../cli/args.js';
import { probeError } from '../errors.js';
import type { KeepaliveMode, Operation, Transport } from '../streaming/types.js';

export interface ProbeEvent {
  readonly schedule?: string;
  readonly clusters?: readonly string[];
  readonly operations: readonly Operation[];
  readonly transports: readonly Transport[];
  readonly keepalives: readonly KeepaliveMode[];
  readonly holdsSeconds: readonly number[];
}

function list<T extends string>(o: Record<string, unknown>, key: string, allowed: readonly T[], fallback: readonly T[]): T[] {
  const v = o[key];
  if (v === undefined) return [...fallback];
  if (!Array.isArray(v) || v.length === 0) throw probeError('CONFIG_INVALID', `event.${key} must be a non-empty list of ${allowed.join(', ')}`, { field: `event.${key}` });
  return v.map((x, i) => {
    if (!allowed.includes(x as T)) throw probeError('CONFIG_INVALID', `event.${key}[${i}]: "${String(x)}" is not one of ${allowed.join(', ')}`, { field: `event.${key}[${i}]` });
    return x as T;
  });
}

export function parseProbeEvent(raw: unknown): ProbeEvent {
  const o = raw === undefined || raw === null ? {} : raw;
  if (typeof o !== 'object' || Array.isArray(o)) throw probeError('CONFIG_INVALID', 'the event must be a JSON object (or empty)', { field: 'event' });
  const e = o as Record<string, unknown>;
  const known = new Set(['schedule', 'clusters', 'operations', 'transports', 'keepalives', 'holds']);
  for (const k of Object.keys(e)) if (!known.has(k)) throw probeError('CONFIG_INVALID', `event.${k} is not a known field (${[...known].join(', ')})`, { field: `event.${k}` });
  let holdsSeconds = [0];
  if (e.holds !== undefined) {
    if (!Array.isArray(e.holds) || e.holds.length === 0) throw probeError('CONFIG_INVALID', 'event.holds must be a non-empty list of durations like "65s"', { field: 'event.holds' });
    holdsSeconds = e.holds.map((h, i) => {
      try {
        return parseDurationSeconds(`event.holds[${i}]`, String(h));
      } catch {
        throw probeError('CONFIG_INVALID', `event.holds[${i}]: "${String(h)}" is not a duration (0s, 65s, 6m)`, { field: `event.holds[${i}]` });
      }
    });
  }
  if (e.clusters !== undefined && (!Array.isArray(e.clusters) || !e.clusters.every((c) => typeof c === 'string'))) {
    throw probeError('CONFIG_INVALID', 'event.clusters must be a list of cluster names', { field: 'event.clusters' });
  }
  if (e.schedule !== undefined && typeof e.schedule !== 'string') throw probeError('CONFIG_INVALID', 'event.schedule must be a string', { field: 'event.schedule' });
  return {
    schedule: e.schedule as string | undefined,
    clusters: e.clusters as string[] | undefined,
    operations: list(e, 'operations', ['exec', 'portforward'] as const, ['exec', 'portforward']),
    transports: list(e, 'transports', ['websocket', 'spdy'] as const, ['websocket', 'spdy']),
    keepalives: list(e, 'keepalives', ['kubectl', 'none'] as const, ['kubectl']),
    holdsSeconds: [...new Set(holdsSeconds)].sort((a, b) => a - b),
  };
}
