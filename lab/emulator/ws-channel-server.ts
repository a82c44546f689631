/**
 * How the server side reads channel messages, as apiserver's wsstream Conn does (k8s.io/apiserver
 * pkg/util/wsstream/conn.go `handle`): each message is read as bytes whatever its frame type
 * (x/net/websocket `Message.Receive` into []byte), an empty one is skipped, and on the base64 protocols the channel
 * is an ASCII digit. So a client that sends stdin in text frames on v4.channel.k8s.io (the Python client does) is
 * served, where a client must refuse a text frame on a binary protocol (client-go's readDemuxLoop: codec.ts).
 * Returns undefined for an empty message.
 */
import { decodeChannelMessage, isBase64Protocol, type ChannelMessage } from '../../src/streaming/channel/codec.js';

export function readClientChannelMessage(data: Buffer, isBinary: boolean, protocol: string): ChannelMessage | undefined {
  if (data.length === 0) return undefined;
  // A text frame on a binary protocol is read as its bytes, as wsstream reads every message.
  return decodeChannelMessage(data, isBase64Protocol(protocol) ? isBinary : true, protocol);
}
