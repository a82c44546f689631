/**
 * What one location's runner needs of the config: its clusters (baked into the function's and the task's
 * environment as KSP_LOCATION_CONFIG, read back with the same cluster rules) and its memory size.
 */
import { probeError } from '../errors.js';
import { Checker, unique } from './checker.js';
import { parseClusters } from './clusters.js';
import type { ClusterConfig, LocationConfig, ProbeConfig } from './types.js';

/**
 * Lambda memory for a location, chosen for CPU, not memory: a full run peaks at 75-88 MB RSS, but
 * Lambda gives CPU in proportion to memory (one vCPU at 1769 MB), and HandshakeLatency is only the
 * path's when the function is not starved. Measured (npm run bench -- lambda-cpu, a child under a
 * CFS quota of the size's CPU share, docs/benchmarks.md): handshake p50 ~200 ms at 128 MB and ~100 ms
 * at 256 MB (20-30× and ~11× an unlimited process: our own CPU), ~9 ms at 512 MB (1.0-1.1×).
 * 512 MB up to three clusters; 1024 MB above, where the sessions are more.
 */
export const SMALL_LOCATION_CLUSTERS = 3;
export const DEFAULT_MEMORY_MB = 512;
export const LARGE_LOCATION_MEMORY_MB = 1024;
export function defaultMemoryMb(clusterCount: number): number {
  return clusterCount <= SMALL_LOCATION_CLUSTERS ? DEFAULT_MEMORY_MB : LARGE_LOCATION_MEMORY_MB;
}
export function functionMemoryMb(config: ProbeConfig, location: LocationConfig): number {
  return config.memoryMb ?? defaultMemoryMb(runtimeConfigFor(config, location).clusters.length);
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

export function parseRuntimeConfig(text: string | undefined): LocationRuntimeConfig {
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
