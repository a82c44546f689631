/**
 * The server half of exec's status (src/streaming/channel/exec-status.ts decodes it): what the kubelet and the
 * API server's translator write on the error channel when the command ends. Only the emulator writes it.
 */
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
