/**
 * An L7 hop (reverse proxy, ingress, WAF, corporate proxy in reverse mode):
 * reads each connection's first request head and can refuse an upgrade kind
 * with its own HTML error page (not a Kubernetes Status), strip the upgrade
 * headers before forwarding, or hold upgrade requests forever (a buffering
 * hop), or reset the first few upgrade requests of a kind (a one-off: a hop's
 * instance restarting, a connection-tracking table full for a moment).
 * Everything else is relayed untouched.
 */
import http from 'node:http';
import net from 'node:net';
import { listen, type Hop, type Upstream } from './common.js';

export type UpgradeKind = 'websocket' | 'spdy';

export interface L7HopOptions {
  readonly upstream: Upstream;
  /** Upgrade kinds answered with `refuseStatus` and an HTML page. */
  readonly refuse?: readonly UpgradeKind[];
  readonly refuseStatus?: number;
  /** Remove Connection/Upgrade before forwarding (a proxy not configured for upgrades). */
  readonly stripUpgrade?: boolean;
  /** Never answer upgrade requests (a buffering hop). */
  readonly holdUpgrades?: boolean;
  /** Reset (TCP RST, no answer) the first `count` upgrade requests of `kind`; the ones after pass. */
  readonly resetFirst?: { readonly kind: UpgradeKind; readonly count: number };
}

const HEAD_LIMIT = 64 * 1024;

function kindOf(head: string): UpgradeKind | undefined {
  const upgrade = /^upgrade:\s*(.+)$/im.exec(head)?.[1]?.trim().toLowerCase();
  if (!upgrade) return undefined;
  if (upgrade.includes('websocket')) return 'websocket';
  if (upgrade.includes('spdy')) return 'spdy';
  return undefined;
}

export function startL7Hop(name: string, o: L7HopOptions): Promise<Hop> {
  let resets = 0;
  return listen(name, (client, track) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > HEAD_LIMIT) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      let head = buf.subarray(0, end).toString('latin1');
      const rest = buf.subarray(end + 4);
      const kind = kindOf(head);
      if (kind && o.holdUpgrades) return; // read it, never answer
      if (kind && kind === o.resetFirst?.kind && resets < o.resetFirst.count) {
        resets++;
        client.resetAndDestroy();
        return;
      }
      if (kind && o.refuse?.includes(kind)) {
        const status = o.refuseStatus ?? 403;
        const text = http.STATUS_CODES[status] ?? 'Error';
        const body = `<html><head><title>${status} ${text}</title></head><body><h1>${status} ${text}</h1><p>${name}: ${kind} upgrades are not allowed by policy.</p></body></html>\n`;
        client.end(
          `HTTP/1.1 ${status} ${text}\r\nServer: ${name}\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      if (kind && o.stripUpgrade) {
        head = head
          .split('\r\n')
          .filter((l) => !/^(upgrade|connection|sec-websocket-[a-z]+):/i.test(l))
          .join('\r\n');
        head += '\r\nConnection: close';
      }
      const server = net.connect(o.upstream.port, o.upstream.host);
      track(server);
      server.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), rest]));
      client.pipe(server);
      server.pipe(client);
      client.resume();
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
    };
    client.on('data', onData);
  });
}
