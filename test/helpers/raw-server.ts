/** A loopback TCP server that reads one HTTP request head and lets the test answer with raw bytes. */
import { createHash } from 'node:crypto';
import net from 'node:net';

export interface RawRequest {
  readonly head: string;
  readonly method: string;
  readonly path: string;
  header(name: string): string | undefined;
}

export interface RawServer {
  readonly url: URL;
  readonly requests: RawRequest[];
  close(): Promise<void>;
}

export async function rawServer(onRequest: (socket: net.Socket, req: RawRequest) => void): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const requests: RawRequest[] = [];
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const i = buf.indexOf('\r\n\r\n');
      if (i < 0) return;
      socket.off('data', onData);
      const head = buf.subarray(0, i).toString('latin1');
      const [line = '', ...lines] = head.split('\r\n');
      const [method = '', path = ''] = line.split(' ');
      const req: RawRequest = {
        head,
        method,
        path,
        header: (name) =>
          lines
            .find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
            ?.slice(name.length + 1)
            .trim(),
      };
      requests.push(req);
      onRequest(socket, req);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`),
    requests,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export function wsAccept(key: string): string {
  return createHash('sha1')
    .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
    .digest('base64');
}

export function ws101(req: RawRequest, protocol?: string): string {
  const lines = [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${wsAccept(req.header('sec-websocket-key') ?? '')}`,
  ];
  if (protocol !== undefined) lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

export function spdy101(protocol: string): string {
  return `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`;
}

/** An unmasked server→client binary WebSocket frame (payload < 126 bytes). */
export function wsBinaryFrame(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x82, payload.length]), payload]);
}
