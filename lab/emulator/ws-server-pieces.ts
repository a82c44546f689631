/**
 * The emulator's tunnel WebSocket (ws's, server side) taught to send a message made of pieces without joining
 * them: a SPDY frame's header and payload, or a tick's frames, go to the socket unmasked in one writev. It
 * writes to ws's socket directly, which keeps frames in order because ws's Sender queues nothing without
 * compression (the emulator never negotiates permessage-deflate); ws is pinned to an exact version.
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { probeError } from '../../src/errors.js';
import type { WsLike } from '../../src/streaming/ws-client.js';
import { headerBytes, total, writeHeader } from '../../src/streaming/ws-frame.js';

export function sendingPieces(ws: WebSocket): WsLike {
  const socket = (ws as unknown as { _socket: Socket })._socket;
  const like = ws as unknown as WsLike & { sendPieces: NonNullable<WsLike['sendPieces']> };
  like.sendPieces = (pieces, cb) => {
    if (ws.readyState !== ws.OPEN) return cb?.(probeError('WS_CLOSED', 'the WebSocket is not open', {}));
    writeUnmaskedBinaryFrame(socket, pieces, cb);
  };
  return like;
}

/**
 * Writes one unmasked binary frame holding `pieces` to a server's socket: the header and the pieces as they are,
 * in one writev. `cb` runs when the last piece has been handed to the kernel.
 */
export function writeUnmaskedBinaryFrame(socket: Socket, pieces: readonly Buffer[], cb?: (err?: Error | null) => void): void {
  const length = total(pieces);
  const header = Buffer.allocUnsafe(headerBytes(length, false));
  writeHeader(header, length, undefined);
  socket.cork();
  socket.write(header);
  const last = pieces.length - 1;
  pieces.forEach((p, i) => {
    if (i === last) socket.write(p, cb);
    else if (p.length > 0) socket.write(p);
  });
  if (last < 0) socket.write(Buffer.alloc(0), cb);
  socket.uncork();
}
