/**
 * What the wire showed for one session, kept when it failed: the upgrade request and reply (headers masked and
 * redacted), the control frames around its end (SPDY pings, resets and GOAWAYs, WebSocket pings, pongs and closes,
 * the socket's FIN or reset), each dated from the session's start. Bounded (EVIDENCE_LIMITS), so a failed run's
 * evidence fits one log line per session; never a secret (the session's redactor and maskHeader run on every value).
 *
 * The recorder is the session's wire log (net/wire-log.ts): the layers that see the frames report them, and nothing
 * is formatted for a session that ends well (runSession keeps the trace of failed sessions only).
 */
import { maskHeader, type WireEvent, type WireLog } from '../net/wire-log.js';
import type { Clock } from '../timers.js';

export const EVIDENCE_LIMITS = {
  /** Control frames kept, the newest: those around the end. */
  frames: 12,
  /** Headers kept of a request or a reply. */
  headers: 24,
  /** Characters kept of a header's value, a URL or a frame's description. */
  valueChars: 160,
} as const;

export interface WireFrame {
  /** Milliseconds since the session started (its dial). */
  readonly atMs: number;
  /** `>` sent by us, `<` received. */
  readonly direction: '>' | '<';
  readonly frame: string;
}

export interface WireTrace {
  /** When the session started (wall clock, ISO 8601): lines the trace up with the API server's and hops' logs. */
  readonly startedAt: string;
  readonly request?: { readonly atMs: number; readonly method: string; readonly url: string; readonly headers: readonly (readonly [string, string])[] };
  readonly reply?: { readonly atMs: number; readonly status: number; readonly statusText: string; readonly headers: readonly (readonly [string, string])[] };
  /** The last control frames, oldest first. */
  readonly frames: readonly WireFrame[];
  /** Control frames seen before the ones kept. */
  readonly framesDropped: number;
}

const clip = (s: string) => (s.length > EVIDENCE_LIMITS.valueChars ? `${s.slice(0, EVIDENCE_LIMITS.valueChars - 1)}…` : s);
const ms = (v: number) => Math.round(v * 10) / 10;

/** Collects one session's wire events; `log` is its WireLog, chained to the connection's own (the CLI's `--wire-log`). */
export class EvidenceRecorder {
  readonly log: WireLog;
  private readonly t0: number;
  private readonly startedAt = new Date().toISOString();
  private request: WireTrace['request'];
  private reply: WireTrace['reply'];
  private readonly frames: WireFrame[] = [];
  private dropped = 0;

  constructor(
    private readonly clock: Clock,
    private readonly scrub: (text: string) => string,
    next?: WireLog,
  ) {
    this.t0 = clock.now();
    this.log = (e) => {
      this.record(e);
      next?.(e);
    };
  }

  private headers(list: readonly (readonly [string, string])[]): [string, string][] {
    return list.slice(0, EVIDENCE_LIMITS.headers).map(([k, v]) => [k, clip(this.scrub(maskHeader(k, v)))]);
  }

  private record(e: WireEvent): void {
    const atMs = ms(this.clock.now() - this.t0);
    switch (e.kind) {
      case 'request':
        this.request ??= { atMs, method: e.method, url: clip(this.scrub(e.url)), headers: this.headers(e.headers) };
        return;
      case 'response':
        this.reply ??= { atMs, status: e.status, statusText: clip(e.statusText), headers: this.headers(e.headers) };
        return;
      default:
        this.frames.push({
          atMs,
          direction: e.direction === 'sent' ? '>' : '<',
          frame: clip(this.scrub(`${e.kind === 'spdy' ? 'SPDY' : 'WebSocket'} ${e.frame}`)),
        });
        if (this.frames.length > EVIDENCE_LIMITS.frames) {
          this.frames.shift();
          this.dropped++;
        }
    }
  }

  trace(): WireTrace {
    return {
      startedAt: this.startedAt,
      ...(this.request ? { request: this.request } : {}),
      ...(this.reply ? { reply: this.reply } : {}),
      frames: [...this.frames],
      framesDropped: this.dropped,
    };
  }
}
