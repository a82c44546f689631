/** How a row (a verdict, a session) is named to people: the hold with its shape, or the transfer's size; a session's kind. */
import { OPERATION_WORDS, TRANSPORT_WORDS } from '../vocabulary.js';
import type { SessionSpec } from './types.js';

/** "WebSocket exec", "SPDY port-forward"; an SDK client's session says so ("SDK-client WebSocket port-forward"). */
export const sessionWords = (r: Pick<SessionSpec, 'operation' | 'transport' | 'keepalive'>): string =>
  `${r.keepalive === 'sdk' ? 'SDK-client ' : ''}${TRANSPORT_WORDS[r.transport]} ${OPERATION_WORDS[r.operation]}`;

const MiB = 1024 * 1024;

/** 8MiB, 512KiB, 1000B. */
export const bytesText = (b: number): string => (b % MiB === 0 ? `${b / MiB}MiB` : b % 1024 === 0 ? `${b / 1024}KiB` : `${b}B`);

/**
 * `65s`, `65s-output` (a shaped hold), `cp 8MiB` (an exec transfer: the kubectl cp path) or `8MiB` (port-forward),
 * with a transfer shape: `cp 8MiB upload`, `8MiB small`.
 */
export function rowText(r: Pick<SessionSpec, 'operation' | 'holdSeconds' | 'transferBytes' | 'holdShape' | 'transferShape'>): string {
  if (r.transferBytes) return `${r.operation === 'exec' ? 'cp ' : ''}${bytesText(r.transferBytes)}${r.transferShape ? ` ${r.transferShape}` : ''}`;
  return r.holdShape ? `${r.holdSeconds}s-${r.holdShape}` : `${r.holdSeconds}s`;
}
