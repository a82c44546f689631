/** The pod's TCP echo port: every forwarded pod port lands here. */
import net from 'node:net';

export interface EchoServer {
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Connections open now. */
  readonly open: number;
  close(): Promise<void>;
}

export async function startEchoServer(host = '127.0.0.1'): Promise<EchoServer> {
  const sockets = new Set<net.Socket>();
  let total = 0;
  const server = net.createServer((s) => {
    total++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return total;
    },
    get open() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
