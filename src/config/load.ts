/** Reads and validates the deployment configuration file (JSON or YAML). */
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { probeError } from '../errors.js';
import { parseProbeConfig, type ProbeConfig } from './probe-config.js';

export function loadProbeConfig(path: string): ProbeConfig {
  return parseProbeConfig(readConfigDocument(path), path);
}

/** The file's document as written (JSON or YAML), not yet checked: what parseProbeConfig reads. */
export function readConfigDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw probeError('CONFIG_INVALID', `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { field: 'config', file: path });
  }
  let raw: unknown;
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw probeError('CONFIG_INVALID', `${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`, {
      field: 'config',
      file: path,
    });
  }
  return raw;
}
