/** HTTP CONNECT through a forward proxy (what Go's http.Transport does for every upgrade). */
import type { Socket } from 'node:net';
import { probeError } from '../errors.js';
import { httpHeadLength, printable, readUntil } from './read-until.js';
import { peerText } from '../text.js';

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
    // What names the proxy and its rule: Server, Via and the first words of its error page (tinyproxy and squid say
    // who they are there; Privoxy's page says "Request blocked by Privoxy").
    const headers = headLines(head);
    const bodyPrefix = printable(await readSome(socket, Number(headers.get('content-length') ?? REFUSAL_BODY_KEEP), REFUSAL_BODY_WAIT_MS), REFUSAL_BODY_KEEP);
    const serverHeader = headers.get('server');
    const viaHeader = headers.get('via');
    const server = serverHeader === undefined ? undefined : peerText(serverHeader, 80);
    const via = viaHeader === undefined ? undefined : peerText(viaHeader, 120);
    throw probeError('DIAL_PROXY', `proxy ${proxy.host} refused CONNECT to ${authority}: "${statusLine.trim()}"${server ? ` (Server: ${server})` : ''}`, {
      ...context,
      status,
      server,
      via,
      bodyPrefix,
    });
  }
}

/** How much of a refusal page is kept, and how long its body may take. */
const REFUSAL_BODY_KEEP = 512;
const REFUSAL_BODY_WAIT_MS = 500;

/** An HTTP head's header lines by lower-case name (the last of repeated ones). */
function headLines(head: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of head.toString('latin1').split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) out.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return out;
}

/** Up to `bytes` (at most REFUSAL_BODY_KEEP) of what the socket sends within `waitMs`; never fails. */
function readSome(socket: Socket, bytes: number, waitMs: number): Promise<Buffer> {
  const want = Math.min(Number.isFinite(bytes) && bytes >= 0 ? bytes : REFUSAL_BODY_KEEP, REFUSAL_BODY_KEEP);
  if (want === 0) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const done = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', done);
      socket.off('close', done);
      socket.off('error', done);
      resolve(Buffer.concat(chunks).subarray(0, want));
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      n += c.length;
      if (n >= want) done();
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', onData);
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', done);
  });
}
