/** Typed SPDY/3 frames: what the parser yields and the serializer takes. */

/** Header names are lower-case; several values of one name travel NUL-joined. */
export type SpdyHeaders = Readonly<Record<string, readonly string[]>>;

export interface DataFrame {
  readonly type: 'DATA';
  readonly streamId: number;
  /** Of a piece (see `partial`), FIN is only on the last one. */
  readonly flags: number;
  readonly data: Buffer;
  /**
   * Set on every piece of a DATA frame but its last, when the parser streams DATA payloads as they arrive
   * (`streamData`): the frame's payload is the pieces in order.
   */
  readonly partial?: true;
}
export interface SynStreamFrame {
  readonly type: 'SYN_STREAM';
  readonly streamId: number;
  readonly associatedId: number;
  readonly priority: number;
  readonly slot: number;
  readonly flags: number;
  readonly headers: SpdyHeaders;
}
export interface SynReplyFrame {
  readonly type: 'SYN_REPLY';
  readonly streamId: number;
  readonly flags: number;
  readonly headers: SpdyHeaders;
}
export interface RstStreamFrame {
  readonly type: 'RST_STREAM';
  readonly streamId: number;
  readonly status: number;
}
export interface SettingsEntry {
  readonly flags: number;
  readonly id: number;
  readonly value: number;
}
export interface SettingsFrame {
  readonly type: 'SETTINGS';
  readonly flags: number;
  readonly entries: readonly SettingsEntry[];
}
export interface PingFrame {
  readonly type: 'PING';
  readonly id: number;
}
export interface GoAwayFrame {
  readonly type: 'GOAWAY';
  readonly lastGoodStreamId: number;
  readonly status: number;
}
export interface HeadersFrame {
  readonly type: 'HEADERS';
  readonly streamId: number;
  readonly flags: number;
  readonly headers: SpdyHeaders;
}
export interface WindowUpdateFrame {
  readonly type: 'WINDOW_UPDATE';
  readonly streamId: number;
  readonly delta: number;
}

export type SpdyFrame =
  | DataFrame
  | SynStreamFrame
  | SynReplyFrame
  | RstStreamFrame
  | SettingsFrame
  | PingFrame
  | GoAwayFrame
  | HeadersFrame
  | WindowUpdateFrame;

/** Convenience: one value per name, as Kubernetes uses them. */
export function headerValue(headers: SpdyHeaders, name: string): string | undefined {
  return headers[name]?.[0];
}

/** One control frame in words, for the wire log: `SYN_STREAM 3 streamtype=stdin`, `PING 1`, `GOAWAY last 7 status 0`. */
export function describeFrame(frame: SpdyFrame): string {
  const headers = (h: SpdyHeaders) =>
    Object.entries(h)
      .map(([k, v]) => `${k}=${v.join(',')}`)
      .join(' ');
  switch (frame.type) {
    case 'DATA':
      return `DATA ${frame.streamId} ${frame.data.length} bytes${frame.flags & 1 ? ' FIN' : ''}`;
    case 'SYN_STREAM':
      return `SYN_STREAM ${frame.streamId} ${headers(frame.headers)}${frame.flags & 1 ? ' FIN' : ''}`;
    case 'SYN_REPLY':
      return `SYN_REPLY ${frame.streamId} ${headers(frame.headers)}${frame.flags & 1 ? ' FIN' : ''}`;
    case 'HEADERS':
      return `HEADERS ${frame.streamId} ${headers(frame.headers)}`;
    case 'RST_STREAM':
      return `RST_STREAM ${frame.streamId} status ${frame.status}`;
    case 'SETTINGS':
      return `SETTINGS ${frame.entries.map((e) => `${e.id}=${e.value}`).join(' ')}`;
    case 'PING':
      return `PING ${frame.id}`;
    case 'GOAWAY':
      return `GOAWAY last ${frame.lastGoodStreamId} status ${frame.status}`;
    case 'WINDOW_UPDATE':
      return `WINDOW_UPDATE ${frame.streamId} +${frame.delta}`;
  }
}
