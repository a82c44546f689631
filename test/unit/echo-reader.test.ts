import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EchoReader } from '../../src/probe/echo.js';

describe('EchoReader', () => {
  it('finds a nonce split across chunks, at every split point', async () => {
    const nonce = 'ksp-0123456789ab\n';
    for (let i = 1; i < nonce.length; i++) {
      const incoming = new PassThrough();
      const reader = new EchoReader(incoming);
      const out = new PassThrough();
      out.on('data', () => {
        incoming.write(`noise${nonce.slice(0, i)}`);
        incoming.write(`${nonce.slice(i)}more`);
      });
      await expect(reader.echo(out, nonce, 1000, new Promise(() => undefined))).resolves.toBeGreaterThanOrEqual(0);
    }
  });

  it('ignores bytes that arrived before the echo was written (stale output)', async () => {
    const incoming = new PassThrough();
    const reader = new EchoReader(incoming);
    const nonce = 'ksp-aaaaaaaaaaaa\n';
    incoming.write(nonce); // before any echo is pending
    await new Promise((r) => setImmediate(r));
    const out = new PassThrough();
    await expect(reader.echo(out, nonce, 200, new Promise(() => undefined))).rejects.toMatchObject({ code: 'ECHO_TIMEOUT' });
  });

  it('regression (flood): 8 MiB of output without the nonce is scanned in linear time', async () => {
    const incoming = new PassThrough();
    const reader = new EchoReader(incoming);
    const out = new PassThrough();
    const chunk = Buffer.alloc(101, 0x61);
    out.on('data', () => {
      for (let i = 0; i < 80_000; i++) incoming.write(chunk);
      incoming.write('ksp-ffffffffffff\n');
    });
    const t0 = performance.now();
    await reader.echo(out, 'ksp-ffffffffffff\n', 10_000, new Promise(() => undefined));
    // Quadratic scanning took tens of seconds here; linear takes well under one.
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});
