/**
 * Decodes the exec error stream the way client-go's errorDecoderV4 does
 * (k8s-streaming-protocols.md 2.5), for v4 and v5 on both transports, and
 * the plain-text error of v1-v3.
 */
import type { ExecExit } from '../types.js';
import type { KubeStatus } from '../../kube/status.js';

export function decodeExecStatus(text: string, protocol: string): ExecExit {
  const structured = protocol.startsWith('v4.') || protocol.startsWith('v5.');
  if (text.length === 0) return { exitCode: 0 }; // client-go: an empty error stream is success
  if (!structured) return { exitCode: undefined, error: `error executing remote command: ${text.slice(0, 300)}` };
  let status: KubeStatus;
  try {
    status = JSON.parse(text) as KubeStatus;
  } catch {
    return { exitCode: undefined, error: `error stream protocol error: not JSON: "${text.slice(0, 120)}"` };
  }
  if (status.status === 'Success') return { exitCode: 0, status };
  if (status.status === 'Failure') {
    if (status.reason === 'NonZeroExitCode') {
      const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
      const n = cause?.message !== undefined && /^\d{1,3}$/.test(cause.message) ? Number(cause.message) : NaN;
      if (Number.isInteger(n) && n >= 0 && n <= 255) return { exitCode: n, status };
      return { exitCode: undefined, status, error: 'error stream protocol error: NonZeroExitCode without a valid ExitCode cause' };
    }
    return { exitCode: undefined, status, error: status.message ?? `Failure (${status.reason ?? 'no reason'})` };
  }
  return { exitCode: undefined, status, error: `unknown error stream status "${String(status.status)}"` };
}

/** Go's json.Marshal(metav1.Status) bytes for an exit code, as the kubelet/translator write them. */
export function encodeExecStatus(exitCode: number): string {
  if (exitCode === 0) return '{"metadata":{},"status":"Success"}';
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [exit ${exitCode}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  });
}
