/**
 * Decodes the exec error stream the way client-go's errorDecoderV4 does
 * (client-go tools/remotecommand/v4.go, errorDecoderV4.decode), for v4 and v5
 * on both transports, and the plain-text error of v1-v3 (v2.go,
 * errorDecoderV1/V2: any text is an error).
 */
import { probeError } from '../../errors.js';
import type { KubeStatus } from '../../kube/status.js';
import type { ExecExit } from '../types.js';
import { ERROR_STREAM_MAX_BYTES, byteCount } from '../bounded-text.js';
import { peerText } from '../../text.js';

/** The most of a peer's message an error carries (a few KiB in every medium: issue 57 §3). */
export const MESSAGE_MAX_CHARS = 4096;

/** A peer's message, cut at MESSAGE_MAX_CHARS with its full length said. */
export function boundedMessage(text: string): string {
  return peerText(text, MESSAGE_MAX_CHARS);
}

/**
 * `totalBytes`: how many bytes the stream carried, when more than `text` holds (bounded-text.ts): such a stream is
 * never a Status the probe believes, and its text is shown clipped, with its size.
 */
export function decodeExecStatus(text: string, protocol: string, totalBytes = Buffer.byteLength(text)): ExecExit {
  const structured = protocol.startsWith('v4.') || protocol.startsWith('v5.');
  const ctx = { subprotocol: protocol };
  if (text.length === 0 && totalBytes === 0) return { exitCode: 0 }; // client-go: an empty error stream is success
  if (totalBytes > Buffer.byteLength(text)) {
    return {
      exitCode: undefined,
      error: probeError(
        'EXEC_STATUS',
        `error stream protocol error: ${byteCount(totalBytes)}, more than the ${byteCount(ERROR_STREAM_MAX_BYTES)} a status may take; it began "${peerText(text, 120)}"`,
        ctx,
      ),
    };
  }
  if (!structured) return { exitCode: undefined, error: probeError('EXEC_FAILED', `error executing remote command: ${peerText(text, 300)}`, ctx) };
  let status: KubeStatus;
  try {
    status = JSON.parse(text) as KubeStatus;
  } catch {
    return { exitCode: undefined, error: probeError('EXEC_STATUS', `error stream protocol error: not JSON: "${peerText(text, 120)}"`, ctx) };
  }
  if (typeof status !== 'object' || status === null)
    return { exitCode: undefined, error: probeError('EXEC_STATUS', 'error stream protocol error: not a Status object', ctx) };
  if (typeof status.message === 'string') status = { ...status, message: boundedMessage(status.message) };
  if (status.status === 'Success') return { exitCode: 0, status };
  if (status.status === 'Failure') {
    if (status.reason === 'NonZeroExitCode') {
      // The first ExitCode cause must hold a decimal 0-255.
      const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
      const n = cause?.message !== undefined && /^\d{1,3}$/.test(cause.message) ? Number(cause.message) : NaN;
      if (Number.isInteger(n) && n >= 0 && n <= 255) return { exitCode: n, status };
      return {
        exitCode: undefined,
        status,
        error: probeError('EXEC_STATUS', 'error stream protocol error: NonZeroExitCode without a valid ExitCode cause', ctx),
      };
    }
    // status.message is bounded above.
    const message = status.message ?? `Failure (${status.reason ?? 'no reason'})`;
    return { exitCode: undefined, status, error: probeError('EXEC_FAILED', message, { ...ctx, reason: status.reason, statusCode: status.code }) };
  }
  return { exitCode: undefined, status, error: probeError('EXEC_STATUS', `unknown error stream status "${String(status.status)}"`, ctx) };
}
