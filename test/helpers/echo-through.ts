/** Writes `data` on a new forwarded connection of `pf` and reads back as many bytes (a port that echoes). */
import type { PortForwardSession } from '../../src/streaming/types.js';

export async function echoThrough(pf: PortForwardSession, port: number, data: Buffer): Promise<Buffer> {
  const conn = await pf.openConnection(port);
  const got = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const timer = setTimeout(() => reject(new Error(`echo stalled at ${n} of ${data.length} bytes`)), 20_000);
    conn.stream.on('data', (c: Buffer) => {
      chunks.push(c);
      n += c.length;
      if (n >= data.length) {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks));
      }
    });
  });
  conn.stream.write(data);
  const out = await got;
  conn.close();
  return out;
}
