/**
 * One error base for the whole project. Errors are matched by their stable
 * `code` (see docs/errors.md), never by `instanceof`: bundles may hold two
 * copies of this module.
 */

export const ERROR_CODES = {
  // SPDY framing (parser / header blocks / session)
  SPDY_FRAME_TOO_LARGE: 'a SPDY frame is longer than the configured limit',
  SPDY_BAD_FRAME: 'a SPDY frame is malformed',
  SPDY_UNKNOWN_CONTROL_TYPE: 'a SPDY control frame has an unknown type',
  SPDY_BAD_VERSION: 'a SPDY control frame is not version 3',
  SPDY_HEADER_BLOCK: 'a SPDY header block is malformed',
  SPDY_HEADER_LIMIT: 'a SPDY header block exceeds a configured limit',
  SPDY_STREAM_LIMIT: 'too many SPDY streams on one session',
  SPDY_PROTOCOL: 'the SPDY peer broke a protocol rule',
  SPDY_STREAM_RESET: 'the peer reset a SPDY stream',
  SPDY_GOAWAY: 'the peer sent GOAWAY',
  SPDY_SESSION_CLOSED: 'the SPDY session is closed',
  SPDY_REPLY_TIMEOUT: 'the peer did not reply to a new SPDY stream in time',
  // WebSocket channel protocols
  WS_PROTOCOL: 'the WebSocket peer broke a protocol rule',
  WS_CLOSED: 'the WebSocket closed',
  WS_MESSAGE_TOO_LARGE: 'a WebSocket message exceeds the configured limit',
  CHANNEL_PROTOCOL: 'a Kubernetes channel message is malformed',
  // Upgrade handshake
  UPGRADE_REJECTED: 'the upgrade request was answered without 101',
  UPGRADE_BAD_RESPONSE: 'the 101 response is not what the protocol requires',
  UPGRADE_TIMEOUT: 'no answer to the upgrade request in time',
  UPGRADE_FAILED: 'the connection failed during the upgrade',
  // Dialing
  DIAL_DNS: 'the host name did not resolve',
  DIAL_REFUSED: 'the TCP connection was refused',
  DIAL_TIMEOUT: 'the TCP connection timed out',
  DIAL_TLS: 'the TLS handshake failed',
  DIAL_PROXY: 'the proxy refused or broke the tunnel',
  DIAL_FAILED: 'the connection failed',
  // Kubernetes semantics
  EXEC_STATUS: 'the exec error stream carried a malformed status',
  EXEC_NO_STATUS: 'the exec session ended without an exit status',
  PORTFORWARD_ERROR: 'the server reported a port-forward error',
  // Configuration / input
  CONFIG_INVALID: 'a configuration value is invalid',
  KUBECONFIG_INVALID: 'the kubeconfig is invalid',
  KUBECONFIG_UNREADABLE: 'the kubeconfig could not be read',
  CREDENTIAL_PLUGIN: 'the exec credential plugin failed',
  USAGE: 'the command line is invalid',
  // Probe
  ECHO_TIMEOUT: 'the echo did not come back in time',
  ECHO_MISMATCH: 'the echo came back different',
  DEADLINE: 'the session ran out of time',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export type ErrorContext = Readonly<Record<string, string | number | boolean | undefined>>;

export class ProbeError extends Error {
  readonly code: ErrorCode;
  readonly context: ErrorContext;

  constructor(code: ErrorCode, message: string, context: ErrorContext = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ProbeError';
    this.code = code;
    this.context = context;
  }

  override toString(): string {
    return `${this.code}: ${this.message}`;
  }
}

export function probeError(code: ErrorCode, message: string, context?: ErrorContext, cause?: unknown): ProbeError {
  return new ProbeError(code, message, context, cause);
}

/** Matches by code, so it works across duplicated module copies. */
export function isProbeError(err: unknown, code?: ErrorCode): err is ProbeError {
  if (typeof err !== 'object' || err === null) return false;
  const c = (err as { code?: unknown }).code;
  if (typeof c !== 'string' || !(c in ERROR_CODES)) return false;
  return code === undefined || c === code;
}

/** A short message for any thrown value, for results and logs. */
export function errorMessage(err: unknown): string {
  if (isProbeError(err)) return `${err.code}: ${err.message}`;
  if (err instanceof Error) {
    // Node errors carry `code`; AWS SDK errors carry their type in `name`.
    const code = (err as NodeJS.ErrnoException).code ?? (err.name && err.name !== 'Error' ? err.name : undefined);
    return code ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
