/**
 * The readable side of a channel that the connection feeds (exec's stdout and stderr over WebSocket): pieces are
 * pushed as they arrive. Nothing writable sits in between — a PassThrough's write costs a callback and a tick
 * per piece on our side of a transfer (issue 42) and held nothing back either: like it, this buffers what the
 * reader has not taken yet (the connection cannot be paused per channel).
 */
import { Readable } from 'node:stream';

export class Inbound extends Readable {
  private over = false;

  override _read(): void {}

  /** Hands `piece` to the reader; an empty piece or one after the end is dropped. */
  deliver(piece: Buffer): void {
    if (!this.over && piece.length > 0) this.push(piece);
  }

  /** No more pieces: the reader sees the end once it has read the rest. */
  finish(): void {
    if (this.over) return;
    this.over = true;
    this.push(null);
  }
}
