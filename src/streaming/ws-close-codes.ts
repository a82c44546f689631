/** WebSocket close codes the probe sends or reads (RFC 6455 §7.4.1), by name instead of bare numbers. */
export const WS_CLOSE = {
  /** Normal closure: kubectl closes a session it is done with this way. */
  NORMAL: 1000,
  /** A protocol error (a frame we cannot parse). */
  PROTOCOL_ERROR: 1002,
  /** No status code was present (never sent on the wire). */
  NO_STATUS: 1005,
  /** The connection closed without a close frame (never sent on the wire). */
  ABNORMAL: 1006,
  /** Data inconsistent with the message type (text that is not UTF-8). */
  INVALID_PAYLOAD: 1007,
  /** A message too big to process. */
  MESSAGE_TOO_BIG: 1009,
} as const;
