/** Shared plumbing for the in-process simulated hops: a listener that tracks and stops its sockets. */
import net from 'node:net';

export interface Upstream {
  readonly host: string;
  readonly port: number;
}

export interface Hop {
  readonly name: string;
  readonly url: URL;
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(name: string, onConnection: (client: net.Socket, track: (s: net.Socket) => void) => void, scheme = 'http'): Promise<Hop> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  const server = net.createServer((client) => {
    track(client);
    onConnection(client, track);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    name,
    port,
    url: new URL(`${scheme}://127.0.0.1:${port}`),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export function upstreamOf(url: URL): Upstream {
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}

/** Ends a TCP connection with FIN or RST. */
export function cut(socket: net.Socket, mode: 'fin' | 'rst'): void {
  if (mode === 'rst') socket.resetAndDestroy();
  else {
    socket.end();
    setTimeout(() => socket.destroy(), 200).unref();
  }
}
