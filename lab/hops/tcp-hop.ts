/**
 * An L4 hop (a TCP load balancer, NAT or firewall): relays bytes, and can cut
 * idle connections, ignore small packets when judging activity (a hop that
 * counts only application data, not keepalive frames), cap a connection's
 * life, or become a black hole (stop forwarding without closing).
 */
import net from 'node:net';
import { cut, listen, type Hop, type Upstream } from './common.js';

export interface TcpHopOptions {
  readonly upstream: Upstream;
  /** Cut a connection after this many seconds without activity. */
  readonly idleCutSeconds?: number;
  readonly cutMode?: 'fin' | 'rst';
  /**
   * Chunks smaller than this many bytes do not count as activity. WebSocket
   * pings (6 bytes from a client) and SPDY PINGs (12 bytes) are below 16.
   */
  readonly activityMinBytes?: number;
  /** Stop forwarding (both ways, no close) after this many seconds. */
  readonly blackHoleAfterSeconds?: number;
  /**
   * End every connection this many seconds after it was accepted, whatever moves (cutMode: FIN or RST): a cap on a
   * connection's life, as GCP's external Application Load Balancer puts on a WebSocket (its backend service timeout).
   */
  readonly lifetimeSeconds?: number;
  /** Hold every chunk from the upstream this long before passing it on (a slow path: a slow first exchange). */
  readonly upstreamDelayMs?: number;
}

export function startTcpHop(name: string, o: TcpHopOptions): Promise<Hop> {
  return listen(name, (client, track) => {
    const server = net.connect(o.upstream.port, o.upstream.host);
    track(server);
    client.setNoDelay(true);
    server.setNoDelay(true);
    let last = performance.now();
    let blackHole = false;
    const relay = (from: net.Socket, to: net.Socket, delayMs = 0) =>
      from.on('data', (chunk: Buffer) => {
        if (blackHole) return;
        const pass = () => {
          // Activity is what the hop forwards, when it forwards it.
          if (chunk.length >= (o.activityMinBytes ?? 0)) last = performance.now();
          if (!to.destroyed && !to.write(chunk)) {
            from.pause();
            to.once('drain', () => from.resume());
          }
        };
        if (delayMs > 0) setTimeout(pass, delayMs);
        else pass();
      });
    relay(client, server);
    relay(server, client, o.upstreamDelayMs);
    client.on('end', () => server.end());
    server.on('end', () => client.end());
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    const timers: NodeJS.Timeout[] = [];
    if (o.idleCutSeconds) {
      const t = setInterval(() => {
        if (performance.now() - last >= o.idleCutSeconds! * 1000) {
          clearInterval(t);
          cut(client, o.cutMode ?? 'fin');
          cut(server, o.cutMode ?? 'fin');
        }
      }, 20);
      timers.push(t);
    }
    if (o.blackHoleAfterSeconds !== undefined) timers.push(setTimeout(() => (blackHole = true), o.blackHoleAfterSeconds * 1000));
    if (o.lifetimeSeconds !== undefined)
      timers.push(
        setTimeout(() => {
          cut(client, o.cutMode ?? 'fin');
          cut(server, o.cutMode ?? 'fin');
        }, o.lifetimeSeconds * 1000),
      );
    for (const t of timers) t.unref();
    client.on('close', () => timers.forEach((t) => clearInterval(t)));
  });
}
