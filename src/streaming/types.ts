/**
 * The transport-neutral contract the probe engine uses: one exec session and
 * one port-forward session interface, whatever the wire protocol underneath.
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import type { KeepaliveMode, Transport } from '../vocabulary.js';
import type { ProbeError } from '../errors.js';
import type { KubeStatus } from '../kube/status.js';
import type { TransportEndCause } from './end-cause.js';
import type { UpgradeTiming } from './upgrade.js';

export type { KeepaliveMode, Operation, Transport } from '../vocabulary.js';

export type { EndCause, TransportEndCause } from './end-cause.js';

export interface ConnectionEnd {
  readonly cause: TransportEndCause;
  /** performance.now() when the end was seen. */
  readonly atMs: number;
  readonly message?: string;
  /** The error behind a `protocol-error` (CHANNEL_PROTOCOL, WS_MESSAGE_TOO_LARGE, SPDY_*…). */
  readonly error?: ProbeError;
}

/** How a connection ended, in words: the cause, and for a protocol error the rule it broke (issue 57 §7). */
export function endWords(end: { readonly cause: string; readonly error?: { readonly message: string } }): string {
  return end.cause === 'protocol-error' && end.error ? `${end.cause}: ${end.error.message}` : end.cause;
}

/** A connection's byte counters: reads tell whether the far side answered what we wrote. */
export interface WireCounters {
  readonly readBytes: number;
  readonly writtenBytes: number;
}

export interface PodTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly container?: string;
}

export interface ExecOptions extends PodTarget {
  /** exec (default) runs `command`; attach joins the container's main process (no command), on the same channels. */
  readonly subresource?: 'exec' | 'attach';
  readonly command: readonly string[];
  readonly stdin?: boolean;
  readonly stdout?: boolean; // default true
  readonly stderr?: boolean; // default true unless tty
  readonly tty?: boolean;
  readonly keepalive?: KeepaliveMode; // default kubectl
  /** WebSocket subprotocols to offer, in order; kubectl offers only v5. */
  readonly websocketProtocols?: readonly string[];
  /** How long to wait for each SYN_REPLY, ms (kubectl: 30 s). */
  readonly streamReplyTimeoutMs?: number;
  /** Initial terminal size when tty (kubectl sends it first). */
  readonly terminalSize?: { readonly width: number; readonly height: number };
}

export interface ExecExit {
  /** 0 on Success; N for NonZeroExitCode; undefined when no usable status came. */
  readonly exitCode: number | undefined;
  readonly status?: KubeStatus;
  /**
   * Why there is no exit code: EXEC_FAILED (the server reported a failure, e.g.
   * an Internal error after the upgrade), EXEC_STATUS (the status is malformed)
   * or EXEC_NO_STATUS (the connection ended before any status came).
   */
  readonly error?: ProbeError<'EXEC_FAILED' | 'EXEC_STATUS' | 'EXEC_NO_STATUS'>;
}

export interface StreamingSession {
  readonly transport: Transport;
  /** The negotiated subprotocol (X-Stream-Protocol-Version or Sec-WebSocket-Protocol). */
  readonly subprotocol: string;
  /** The handshake's phases; `timing.at101` is when the 101 was read. */
  readonly timing: UpgradeTiming;
  /** Resolves once, when the underlying connection ends for any reason. */
  readonly ended: Promise<ConnectionEnd>;
  /** Bytes read and written on the connection so far (TLS records, pings and all): what moved, each way. */
  wire(): WireCounters;
  /** SPDY: the streams the server opened and the client refused (RST_STREAM REFUSED_STREAM), so far. */
  streamsRefused?(): number;
  /** Closes the way kubectl does; idempotent. */
  close(): void;
  /** Drops the connection at once; idempotent. */
  destroy(): void;
}

export interface ExecSession extends StreamingSession {
  readonly stdin: Writable | undefined;
  readonly stdout: Readable | undefined;
  readonly stderr: Readable | undefined;
  resize(width: number, height: number): void;
  /** Resolves when the server reports the exit status or the connection ends without one. */
  readonly exit: Promise<ExecExit>;
}

export interface PortForwardOptions extends PodTarget {
  readonly keepalive?: KeepaliveMode;
  /** How long to wait for each SYN_REPLY, ms (kubectl: 30 s). */
  readonly streamReplyTimeoutMs?: number;
}

export interface ForwardedConnection {
  /** Bytes to and from the pod port. */
  readonly stream: Duplex;
  /** Text the server wrote on the error stream (e.g. "error forwarding port…"), once it ends. */
  readonly errorText: Promise<string>;
  /**
   * Resolves once, when this forwarded connection ends: `stream-reset` when the
   * server reset it, `fin` when it closed it, else how the whole connection ended.
   */
  readonly ended: Promise<ConnectionEnd>;
  close(): void;
}

export interface PortForwardSession extends StreamingSession {
  /** Opens one forwarded connection to `port`, as kubectl does per accepted local connection. */
  openConnection(port: number): Promise<ForwardedConnection>;
}
