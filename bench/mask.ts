/**
 * WebSocket masking of a 32 KiB frame payload: bufferutil's native loop (linux-x64, this machine), our
 * JavaScript fallback (the arm64 Lambda and task, where bufferutil has no prebuild) and ws's own byte loop
 * for reference. Each checks its output against the byte loop first.
 */
import { createRequire } from 'node:module';
import { maskInJs } from '../src/streaming/ws-frame.js';
import { BenchFailure, type Row } from './common.js';

type MaskFn = (source: Buffer, key: Buffer, output: Buffer, offset: number, length: number) => void;

const byteLoop: MaskFn = (source, key, output, offset, length) => {
  for (let i = 0; i < length; i++) output[offset + i] = source[i]! ^ key[i & 3]!;
};

export async function maskBench(): Promise<Row[]> {
  const LENGTH = 32 * 1024;
  const source = Buffer.alloc(LENGTH);
  for (let i = 0; i < LENGTH; i++) source[i] = (i * 31) & 0xff;
  const key = Buffer.from([0x3c, 0xa5, 0x0f, 0x77]);
  const expected = Buffer.alloc(LENGTH + 8);
  byteLoop(source, key, expected, 8, LENGTH);
  const native = (createRequire(import.meta.url)('bufferutil') as { mask: MaskFn }).mask;
  const rate = (fn: MaskFn, label: string): number => {
    const out = Buffer.alloc(LENGTH + 8);
    fn(source, key, out, 8, LENGTH);
    if (!out.equals(expected)) throw new BenchFailure(`${label} masked differently from the byte loop`);
    for (let i = 0; i < 200; i++) fn(source, key, out, 8, LENGTH);
    const runs = 3000;
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) fn(source, key, out, 8, LENGTH);
    return (runs * LENGTH) / 2 ** 20 / ((performance.now() - t0) / 1000);
  };
  const bytes = rate(byteLoop, "ws's byte loop");
  const js = rate(maskInJs, 'our JavaScript fallback');
  const nat = rate(native, 'bufferutil');
  return [
    { bench: 'masking (32 KiB)', what: "ws's JavaScript byte loop (its fallback)", value: bytes, unit: 'MiB/s' },
    {
      bench: 'masking (32 KiB)',
      what: 'our JavaScript fallback, 4 bytes at a time (arm64 Lambda and task)',
      value: js,
      unit: 'MiB/s',
      ratio: `${(js / bytes).toFixed(1)}× the byte loop`,
      target: '≥ 2× the byte loop',
      pass: js >= 2 * bytes,
    },
    { bench: 'masking (32 KiB)', what: 'bufferutil, native (linux-x64)', value: nat, unit: 'MiB/s', ratio: `${(nat / js).toFixed(1)}× our fallback` },
  ];
}
