/** SOCKS5 CONNECT (RFC 1928) with optional username/password (RFC 1929), as Go's x/net/proxy does. */
import net, { type Socket } from 'node:net';
import { probeError } from '../errors.js';
import { readUntil } from './read-until.js';

const REPLY_TEXT: Readonly<Record<number, string>> = {
  1: 'general failure',
  2: 'connection not allowed by ruleset',
  3: 'network unreachable',
  4: 'host unreachable',
  5: 'connection refused',
  6: 'TTL expired',
  7: 'command not supported',
  8: 'address type not supported',
};

const exactly = (n: number) => (b: Buffer) => (b.length >= n ? n : undefined);

export async function connectViaSocks5(socket: Socket, proxy: URL, host: string, port: number): Promise<void> {
  const where = `SOCKS5 proxy ${proxy.host}`;
  const destination = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
  const context = { proxy: proxy.host, host, port };
  const user = decodeURIComponent(proxy.username);
  const pass = decodeURIComponent(proxy.password);
  socket.write(Buffer.from(user ? [5, 2, 0, 2] : [5, 1, 0]));
  const choice = await readUntil(socket, exactly(2), `${where} greeting`, context);
  if (choice[0] !== 5) throw probeError('DIAL_PROXY', `${where} is not a SOCKS5 server (version byte ${choice[0]})`, context);
  if (choice[1] === 2) {
    const u = Buffer.from(user);
    const p = Buffer.from(pass);
    socket.write(Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]));
    const auth = await readUntil(socket, exactly(2), `${where} authentication`, context);
    if (auth[1] !== 0) throw probeError('DIAL_PROXY', `${where} rejected the username/password`, context);
  } else if (choice[1] !== 0) {
    throw probeError('DIAL_PROXY', `${where} accepts none of our authentication methods (it chose ${choice[1]})`, context);
  }
  let addr: Buffer;
  const ipVersion = net.isIP(host);
  if (ipVersion === 4) addr = Buffer.from([1, ...host.split('.').map(Number)]);
  else if (ipVersion === 6) {
    const full = new net.SocketAddress({ address: host, family: 'ipv6' }).address;
    const groups = expandIpv6(full);
    addr = Buffer.alloc(17);
    addr[0] = 4;
    groups.forEach((g, i) => addr.writeUInt16BE(g, 1 + i * 2));
  } else {
    const h = Buffer.from(host);
    addr = Buffer.concat([Buffer.from([3, h.length]), h]);
  }
  const portBuf = Buffer.alloc(2);
  portBuf.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), addr, portBuf]));
  const replyLength = (b: Buffer): number | undefined => {
    if (b.length < 5) return undefined;
    const atyp = b[3];
    const len = atyp === 1 ? 10 : atyp === 4 ? 22 : atyp === 3 ? 7 + b[4]! : 10;
    return b.length >= len ? len : undefined;
  };
  const reply = await readUntil(socket, replyLength, `${where} CONNECT to ${destination}`, context);
  if (reply[1] !== 0) {
    throw probeError('DIAL_PROXY', `${where} refused CONNECT to ${destination}: ${REPLY_TEXT[reply[1]!] ?? `reply ${reply[1]}`}`, {
      ...context,
      reply: reply[1],
    });
  }
}

function expandIpv6(address: string): number[] {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const missing = 8 - h.length - t.length;
  return [...h, ...Array<string>(tail !== undefined ? missing : 0).fill('0'), ...t].map((g) => parseInt(g || '0', 16));
}
