/**
 * The Kubernetes channel protocols over WebSocket (apimachinery
 * pkg/util/httpstream/wsstream/conn.go; client-go tools/remotecommand/
 * websocket.go for v5): each binary message is [channel byte][payload]; the
 * base64 variants use text messages of an ASCII digit then StdEncoding base64.
 */
import { probeError } from '../../errors.js';

export const Channel = { STDIN: 0, STDOUT: 1, STDERR: 2, ERROR: 3, RESIZE: 4, CLOSE: 255 } as const;

export const ExecSubprotocol = {
  V5: 'v5.channel.k8s.io',
  V4: 'v4.channel.k8s.io',
  V4_BASE64: 'v4.base64.channel.k8s.io',
  BASE64: 'base64.channel.k8s.io',
  V1: 'channel.k8s.io',
} as const;

export interface ChannelMessage {
  readonly channel: number;
  readonly payload: Buffer;
}

export const isBase64Protocol = (protocol: string) => protocol.includes('base64');

export function encodeChannelMessage(channel: number, payload: Buffer, protocol: string): { data: Buffer | string; binary: boolean } {
  if (isBase64Protocol(protocol)) return { data: String.fromCharCode(48 + channel) + payload.toString('base64'), binary: false };
  const out = Buffer.allocUnsafe(payload.length + 1);
  out[0] = channel;
  payload.copy(out, 1);
  return { data: out, binary: true };
}

/** The one-byte channel prefix of a binary message, shared (a frame's pieces are read, never written). */
const PREFIXES = Array.from({ length: 256 }, (_, c) => Buffer.of(c));
export const channelPrefix = (channel: number): Buffer => PREFIXES[channel]!;

/** v5 only: half-close one channel. The payload is exactly one byte (wsstream/conn.go). */
export function encodeCloseSignal(channel: number): Buffer {
  return Buffer.from([Channel.CLOSE, channel]);
}

export function decodeChannelMessage(data: Buffer, isBinary: boolean, protocol: string): ChannelMessage {
  if (isBase64Protocol(protocol)) {
    if (isBinary) throw probeError('CHANNEL_PROTOCOL', `binary message on base64 subprotocol ${protocol}`, { subprotocol: protocol });
    const text = data.toString('latin1');
    if (text.length === 0) throw probeError('CHANNEL_PROTOCOL', 'empty text message: no channel digit', { subprotocol: protocol });
    const channel = text.charCodeAt(0) - 48;
    if (channel < 0 || channel > 9)
      throw probeError('CHANNEL_PROTOCOL', `text message does not start with a channel digit (0x${text.charCodeAt(0).toString(16)})`, {
        subprotocol: protocol,
      });
    return { channel, payload: Buffer.from(text.slice(1), 'base64') };
  }
  // client-go readDemuxLoop: a text message is fatal on the binary protocols.
  if (!isBinary) throw probeError('CHANNEL_PROTOCOL', `text message on binary subprotocol ${protocol || '(none)'}`, { subprotocol: protocol });
  if (data.length === 0) throw noChannelByte(protocol);
  return { channel: data[0]!, payload: data.subarray(1) };
}

/** A binary message with no byte at all: no channel to read (client-go readDemuxLoop refuses it too). */
export const noChannelByte = (protocol: string) => probeError('CHANNEL_PROTOCOL', 'empty binary message: no channel byte', { subprotocol: protocol });
