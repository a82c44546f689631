/**
 * One error base for the whole project. Errors are matched by their stable
 * `code` (see docs/errors.md), never by `instanceof`: bundles may hold two
 * copies of this module. Each code has its own typed `context` (what was
 * wrong, where: stream id, byte offset, field, status), so callers read
 * details from the context instead of casting to subclasses. Messages are
 * plain words for people and never repeat the code.
 */
import type { DialPhases, KubeStatus } from './wire-types.js';

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
  SPDY_STREAM_RESET: 'a SPDY stream was reset',
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
  EXEC_FAILED: 'the server reported on the error stream that the command failed to run',
  EXEC_STATUS: 'the exec error stream carried a malformed status',
  EXEC_NO_STATUS: 'the exec session ended without an exit status',
  TTY_SIZE_LOST: "a terminal session's size (sent as kubectl sends it) is not the size its process reads",
  PORTFORWARD_ERROR: 'the server reported a port-forward error',
  STREAM_ERROR: 'the upgrade succeeded, then the server reported an error on the error stream (not the pod: the path to its kubelet or runtime)',
  REST_FAILED: 'a plain API request (discovery, version, access review) failed',
  PEER_NOT_READING: 'the peer kept sending pings or streams and stopped reading our replies: the session was cut once they passed their bound',
  REST_DEADLINE: 'a plain API request was still not answered in full at its deadline (a server trickling its reply, or one that never ends it)',
  // Configuration / input
  CONFIG_INVALID: 'a configuration value is invalid',
  KUBECONFIG_INVALID: 'the kubeconfig is invalid',
  KUBECONFIG_UNREADABLE: 'the kubeconfig could not be read',
  CREDENTIAL_PLUGIN: 'the exec credential plugin failed',
  USAGE: 'the command line is invalid',
  // Publishing
  PUBLISH_FAILED: 'the metrics could not be delivered to where they were sent (a Pushgateway)',
  // Probe
  ECHO_TIMEOUT: 'the echo did not come back in time',
  ECHO_MISMATCH: 'bytes came back, but not the echo',
  ECHO_CONNECTION_ENDED: 'the connection ended before the echo came back',
  ECHO_WRITE_FAILED: 'the echo could not be written',
  TRANSFER_TRUNCATED: 'the transfer lost its tail: the exit status (or the end) came before the last bytes',
  TRANSFER_STALLED: 'no byte of the transfer came back for longer than its stall deadline',
  TRANSFER_MISMATCH: 'the transfer came back, but not byte for byte as sent',
  TRANSFER_TIMEOUT: 'the transfer did not finish within its time limit (the path is slower than the floor rate)',
  TRANSFER_ENDED: 'the connection ended in the middle of the transfer',
  DEADLINE: 'the session ran out of time',
  INTERRUPTED: 'the run was interrupted (SIGINT or SIGTERM) before the session finished',
  INTERNAL: 'a bug in the probe: something that cannot happen did',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The handshake's timings so far, kept by every upgrade failure. */
interface UpgradeContext {
  /** DNS, TCP, proxy, TLS and upgrade phases reached, in ms. */
  readonly phases: DialPhases & { readonly upgradeMs?: number };
}

interface DialContext {
  readonly host: string;
  readonly port?: number;
  readonly phases?: DialPhases;
  /** The OS or TLS error code (ECONNREFUSED, ERR_TLS_CERT_ALTNAME_INVALID…). */
  readonly errno?: string;
}

/** What each code's context carries. Never a secret: contexts reach results and logs. */
export interface ErrorContexts {
  SPDY_FRAME_TOO_LARGE: { readonly length: number; readonly limit: number; readonly offset?: number; readonly streamId?: number };
  SPDY_BAD_FRAME: { readonly offset: number; readonly frameType: string };
  SPDY_UNKNOWN_CONTROL_TYPE: { readonly offset: number; readonly controlType: number };
  SPDY_BAD_VERSION: { readonly offset: number; readonly version: number };
  SPDY_HEADER_BLOCK: { readonly offset?: number; readonly blockOffset?: number };
  SPDY_HEADER_LIMIT: { readonly limit: number; readonly value: number; readonly offset?: number };
  SPDY_STREAM_LIMIT: { readonly limit: number };
  SPDY_PROTOCOL: { readonly offset?: number; readonly streamId?: number };
  SPDY_STREAM_RESET: { readonly streamId: number; readonly status: number; readonly statusName: string; readonly byPeer: boolean };
  SPDY_GOAWAY: { readonly status: number; readonly lastGoodStreamId: number };
  SPDY_SESSION_CLOSED: { readonly streamId?: number; readonly cause?: string };
  SPDY_REPLY_TIMEOUT: { readonly streamId: number; readonly timeoutMs: number };
  WS_PROTOCOL: { readonly wsCode?: string };
  WS_CLOSED: { readonly closeCode?: number };
  WS_MESSAGE_TOO_LARGE: { readonly limitBytes: number };
  CHANNEL_PROTOCOL: { readonly subprotocol: string; readonly channel?: number };
  UPGRADE_REJECTED: UpgradeContext & {
    readonly status: number;
    /** The first bytes of the body, printable. */
    readonly bodyPrefix: string;
    /** The body as a Kubernetes Status: the API server answered. Absent: a hop did. */
    readonly kubeStatus?: KubeStatus;
    /** The reply's Server header, when it names the software that answered. */
    readonly server?: string;
    /** The reply's Via header (Varnish, squid and other proxies add it). */
    readonly via?: string;
  };
  UPGRADE_BAD_RESPONSE: UpgradeContext;
  UPGRADE_TIMEOUT: UpgradeContext & { readonly timeoutMs: number };
  UPGRADE_FAILED: UpgradeContext & { readonly errno?: string };
  DIAL_DNS: DialContext;
  DIAL_REFUSED: DialContext;
  DIAL_TIMEOUT: DialContext & { readonly timeoutMs?: number };
  DIAL_TLS: DialContext & {
    /** The name (or IP) the certificate was checked against. */
    readonly checkedName?: string;
    /** What the certificate holds: its subject CN and subjectAltNames. */
    readonly certificateNames?: string;
    /** True when the chain was not trusted (as opposed to a name mismatch). */
    readonly untrusted?: boolean;
    /** Who issued the certificate that was presented. */
    readonly issuer?: string;
    /** Whose certificate: the API server's or the https:// proxy's. */
    readonly peer?: 'server' | 'proxy';
  };
  DIAL_PROXY: DialContext & {
    readonly proxy: string;
    readonly status?: number;
    readonly reply?: number;
    /** A refused CONNECT's Server and Via headers and the first bytes of its page: they name the proxy and its rule. */
    readonly server?: string;
    readonly via?: string;
    readonly bodyPrefix?: string;
  };
  DIAL_FAILED: DialContext;
  EXEC_FAILED: { readonly subprotocol: string; readonly reason?: string; readonly statusCode?: number };
  EXEC_STATUS: { readonly subprotocol: string };
  EXEC_NO_STATUS: { readonly cause: string };
  TTY_SIZE_LOST: { readonly sent: string; readonly seen: string; readonly when: 'start' | 'resize' };
  PORTFORWARD_ERROR: { readonly port: number; readonly text: string };
  STREAM_ERROR: { readonly operation: string; readonly text: string };
  REST_FAILED: { readonly method: string; readonly path: string; readonly status?: number; readonly kubeStatus?: KubeStatus; readonly timeoutMs?: number };
  PEER_NOT_READING: { readonly queuedBytes: number; readonly boundBytes: number; readonly sending: 'pings' | 'streams' };
  REST_DEADLINE: { readonly method: string; readonly path: string; readonly deadlineMs: number };
  CONFIG_INVALID: { readonly field: string; readonly file?: string };
  KUBECONFIG_INVALID: { readonly file: string; readonly field?: string };
  KUBECONFIG_UNREADABLE: { readonly file?: string; readonly field?: string };
  CREDENTIAL_PLUGIN: { readonly field: string };
  USAGE: { readonly field?: string };
  /** `url` is the target without its user info, never a credential. */
  PUBLISH_FAILED: { readonly target: 'pushgateway'; readonly url: string; readonly status?: number; readonly bodyPrefix?: string; readonly timeoutMs?: number };
  ECHO_TIMEOUT: { readonly timeoutMs: number };
  ECHO_MISMATCH: { readonly expectedBytes: number; readonly receivedBytes: number; readonly receivedPrefix: string };
  ECHO_CONNECTION_ENDED: { readonly cause?: string };
  ECHO_WRITE_FAILED: { readonly reason: string };
  TRANSFER_TRUNCATED: { readonly sentBytes: number; readonly receivedBytes: number; readonly lostBytes: number };
  TRANSFER_STALLED: { readonly receivedBytes: number; readonly stallSeconds: number };
  TRANSFER_MISMATCH: { readonly offset: number };
  TRANSFER_TIMEOUT: { readonly receivedBytes: number; readonly limitSeconds: number };
  TRANSFER_ENDED: { readonly receivedBytes: number; readonly cause: string };
  DEADLINE: { readonly deadlineMs: number };
  INTERRUPTED: { readonly signal: string; readonly heldSeconds: number | null };
  INTERNAL: { readonly where: string };
}

export class ProbeError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly context: ErrorContexts[C];

  constructor(code: C, message: string, context: ErrorContexts[C], cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ProbeError';
    this.code = code;
    this.context = context;
  }

  override toString(): string {
    return `${this.code}: ${this.message}`;
  }
}

export function probeError<C extends ErrorCode>(code: C, message: string, context: ErrorContexts[C], cause?: unknown): ProbeError<C> {
  return new ProbeError(code, message, context, cause);
}

/** Matches by code, so it works across duplicated module copies. */
export function isProbeError<C extends ErrorCode = ErrorCode>(err: unknown, code?: C): err is ProbeError<C> {
  if (typeof err !== 'object' || err === null) return false;
  const c = (err as { code?: unknown }).code;
  // Own keys only: `in` would also accept Object.prototype's names (toString, constructor) as codes.
  if (typeof c !== 'string' || !Object.hasOwn(ERROR_CODES, c)) return false;
  return code === undefined || c === code;
}

/** The message of any thrown value, for results and logs (never with a code pasted in). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * A stable code for any thrown value: ours, a Node errno (ECONNRESET), or an
 * AWS SDK error's name (ThrottlingException); `fallback` otherwise.
 */
export function errorCodeOf(err: unknown, fallback = 'ERROR'): string {
  if (isProbeError(err)) return err.code;
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    if (err.name && err.name !== 'Error') return err.name;
  }
  return fallback;
}
