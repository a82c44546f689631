/**
 * How a streaming connection ended, in the probe's words (one vocabulary for
 * the SPDY session, the WebSocket, the forwarded connection and the hold):
 *
 * - `local`: we closed it ourselves.
 * - `fin` / `rst`: the TCP connection was closed / reset under us.
 * - `ws-close:<code>`: a WebSocket close frame with that code (RFC 6455 §7.4).
 * - `goaway`: a SPDY GOAWAY.
 * - `stream-reset`: RST_STREAM on a stream we needed (the forwarded connection).
 * - `no-pong`: kubectl's keepalive deadline passed (61 s without a pong).
 * - `protocol-error`: the peer sent bytes we cannot parse.
 * - `echo-timeout`: the connection looked open but nothing came back (a black hole).
 * - `deadline`: the session ran past its own deadline.
 * - `interrupted`: the run was interrupted (SIGINT / SIGTERM) and closed the session.
 * - `error`: anything else.
 */
export type EndCause =
  | 'local'
  | 'fin'
  | 'rst'
  | `ws-close:${number}`
  | 'goaway'
  | 'stream-reset'
  | 'no-pong'
  | 'protocol-error'
  | 'echo-timeout'
  | 'deadline'
  | 'interrupted'
  | 'error';

/** The causes a transport can observe on its own (the probe adds echo-timeout and deadline). */
export type TransportEndCause = Exclude<EndCause, 'echo-timeout' | 'deadline' | 'interrupted'>;

/** The causes a SPDY session can observe. */
export type SpdySessionEndCause = Extract<EndCause, 'local' | 'fin' | 'rst' | 'goaway' | 'protocol-error' | 'error'>;
