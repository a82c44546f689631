/** Typed SPDY/3 frames: what the parser yields and the serializer takes. */

/** Header names are lower-case; several values of one name travel NUL-joined. */
export type SpdyHeaders = Readonly<Record<string, readonly string[]>>;

export interface DataFrame {
  readonly type: 'DATA';
  readonly streamId: number;
  readonly flags: number;
  readonly data: Buffer;
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
