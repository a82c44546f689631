/**
 * What one location's runner needs of the config: its clusters (baked into the function's and the task's
 * environment as KSP_LOCATION_CONFIG, read back with the same cluster rules) and its memory size.
 */
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import { probeError } from '../errors.js';
import { Checker, unique } from './checker.js';
import { parseClusters } from './clusters.js';
import type { ClusterConfig, LocationConfig, ProbeConfig } from './types.js';
import { defaultMemoryMb, sessionStarts } from './location-size.js';
import { runnerFor } from './plan.js';

/**
 * Lambda memory for a location, chosen for CPU, not memory: Lambda gives CPU in proportion to memory (one vCPU at
 * 1769 MB), and HandshakeLatency is only the path's when the start pacer can let the run's sessions through at an
 * honest pace (location-size.ts; npm run bench -- lambda-cpu and -- scale, docs/benchmarks.md). The smallest
 * step of 512 / 1024 / 1769 MB that paces the location's largest Lambda schedule, or what memoryMb says.
 */
export function functionMemoryMb(config: ProbeConfig, location: LocationConfig): number {
  return config.memoryMb ?? defaultMemoryMb(locationSessionStarts(config, location));
}

/** The most sessions one Lambda run of this location starts (its largest schedule run by the Lambda). */
export function locationSessionStarts(config: ProbeConfig, location: LocationConfig): number {
  const clusters = runtimeConfigFor(config, location).clusters;
  return Math.max(0, ...config.schedules.filter((s) => runnerFor(s) === 'lambda').map((s) => sessionStarts(clusters, s)));
}

/** The part of the config one location's Lambda needs (baked into its environment). */
export interface LocationRuntimeConfig {
  readonly project: string;
  readonly location: string;
  readonly region: string;
  readonly clusters: readonly ClusterConfig[];
}

export function runtimeConfigFor(config: ProbeConfig, location: LocationConfig): LocationRuntimeConfig {
  return {
    project: config.project,
    location: location.name,
    region: location.region,
    clusters: config.clusters.filter((c) => !location.clusters || location.clusters.includes(c.name)),
  };
}

/** The prefix of a compressed KSP_LOCATION_CONFIG: brotli, then base64. */
export const COMPRESSED_PREFIX = 'br64:';

/**
 * KSP_LOCATION_CONFIG's value: the JSON as is while it fits `maxBytes` (Lambda allows 4 KB of environment in
 * all), else brotli-compressed and base64'd (a 50-cluster location's 12 KB of JSON is about 1.7 KB so).
 */
export function encodeRuntimeConfig(config: LocationRuntimeConfig, maxBytes: number): string {
  const json = JSON.stringify(config);
  if (Buffer.byteLength(json) <= maxBytes) return json;
  return COMPRESSED_PREFIX + brotliCompressSync(json, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }).toString('base64');
}

export function parseRuntimeConfig(value: string | undefined): LocationRuntimeConfig {
  let text = value;
  if (text?.startsWith(COMPRESSED_PREFIX)) {
    try {
      text = brotliDecompressSync(Buffer.from(text.slice(COMPRESSED_PREFIX.length), 'base64')).toString('utf8');
    } catch {
      throw probeError('CONFIG_INVALID', `KSP_LOCATION_CONFIG starts with ${COMPRESSED_PREFIX} but is not brotli-compressed base64`, {
        field: 'KSP_LOCATION_CONFIG',
      });
    }
  }
  if (!text)
    throw probeError('CONFIG_INVALID', 'KSP_LOCATION_CONFIG is not set: the function was not deployed by the StreamProbe construct', {
      field: 'KSP_LOCATION_CONFIG',
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw probeError('CONFIG_INVALID', 'KSP_LOCATION_CONFIG is not JSON', { field: 'KSP_LOCATION_CONFIG' });
  }
  const o = raw as Partial<LocationRuntimeConfig>;
  if (!o || typeof o.location !== 'string' || typeof o.region !== 'string' || !Array.isArray(o.clusters)) {
    throw probeError('CONFIG_INVALID', 'KSP_LOCATION_CONFIG lacks location, region or clusters', { field: 'KSP_LOCATION_CONFIG' });
  }
  // The clusters by the same rules as the config file (parseClusters), nothing else invented around them.
  const c: Checker = new Checker('KSP_LOCATION_CONFIG');
  const clusters = parseClusters(c, o.clusters);
  unique(c, clusters, 'clusters');
  if (clusters.length === 0) c.fail('clusters', 'is empty: nothing to probe');
  return { project: o.project ?? 'kube-stream-probe', location: o.location, region: o.region, clusters };
}
