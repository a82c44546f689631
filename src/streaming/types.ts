/**
 * The transport-neutral contract the probe engine uses: one exec session and
 * one port-forward session interface, whatever the wire protocol underneath.
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import type { KeepaliveMode, Transport } from '../vocabulary.js';
import type { KubeStatus } from '../kube/status.js';
import type { UpgradeTiming } from './upgrade.js';

export type { KeepaliveMode, Operation, Transport } from '../vocabulary.js';

/**
 * How a connection ended, in the probe's words (architecture.md, step 5):
 * `local` we closed it; `fin`/`rst` TCP; `ws-close:<code>` a WebSocket close
 * frame; `goaway` SPDY GOAWAY; `stream-reset` RST_STREAM on a stream we
 * needed; `no-pong` the keepalive deadline passed; `protocol-error` the peer
 * sent bytes we cannot parse; `error` anything else.
 */
export type EndCause = 'local' | 'fin' | 'rst' | `ws-close:${number}` | 'goaway' | 'stream-reset' | 'no-pong' | 'protocol-error' | 'error';

export interface ConnectionEnd {
  readonly cause: EndCause;
  /** performance.now() when the end was seen. */
  readonly atMs: number;
  readonly message?: string;
}

export interface PodTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly container?: string;
}

export interface ExecOptions extends PodTarget {
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
  /** Why there is no exit code, or the Failure message. */
  readonly error?: string;
}

export interface StreamingSession {
  readonly transport: Transport;
  /** The negotiated subprotocol (X-Stream-Protocol-Version or Sec-WebSocket-Protocol). */
  readonly subprotocol: string;
  readonly timing: UpgradeTiming;
  /** performance.now() when the 101 was read. */
  readonly upgradedAt: number;
  /** Resolves once, when the underlying connection ends for any reason. */
  readonly ended: Promise<ConnectionEnd>;
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
  close(): void;
}

export interface PortForwardSession extends StreamingSession {
  /** Opens one forwarded connection to `port`, as kubectl does per accepted local connection. */
  openConnection(port: number): Promise<ForwardedConnection>;
}
