/** HTTP CONNECT through a forward proxy (what Go's http.Transport does for every upgrade). */
import type { Socket } from 'node:net';
import { probeError } from '../errors.js';
import { httpHeadLength, printable, readUntil } from './read-until.js';

export async function connectViaHttpProxy(socket: Socket, proxy: URL, host: string, port: number): Promise<void> {
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  if (proxy.username) {
    const cred = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    lines.push(`Proxy-Authorization: Basic ${Buffer.from(cred).toString('base64')}`);
  }
  socket.write(lines.join('\r\n') + '\r\n\r\n');
  const context = { proxy: proxy.host, host, port };
  const head = await readUntil(socket, httpHeadLength, `proxy ${proxy.host} CONNECT to ${authority}`, context);
  const statusLine = head.toString('latin1').split('\r\n')[0] ?? '';
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) {
    throw probeError('DIAL_PROXY', `proxy ${proxy.host} answered CONNECT with something that is not HTTP: "${printable(head)}"`, context);
  }
  const status = Number(m[1]);
  if (status < 200 || status > 299) {
    throw probeError('DIAL_PROXY', `proxy ${proxy.host} refused CONNECT to ${authority}: "${statusLine.trim()}"`, { ...context, status });
  }
}
