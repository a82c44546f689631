/**
 * Minimal tar for the emulated pod's `tar cf -` / `tar xf -` (what `kubectl
 * cp` runs): USTAR headers (POSIX.1-1988), directories and regular files;
 * PAX ('x') path records and GNU long names ('L'), which Go's archive/tar and
 * GNU tar write for long paths, are read. Everything else is skipped.
 */
const BLOCK = 512;

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, type: '0' | '5', size: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100) throw new Error(`tar: ${name}: name too long`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, 'utf8');
  h.write(octal(type === '5' ? 0o755 : 0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(mtime, 12), 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write(type, 156, 'latin1');
  h.write('ustar\0', 257, 'latin1');
  h.write('00', 263, 'latin1');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

export interface TarEntry {
  readonly name: string;
  readonly type: 'file' | 'dir';
  readonly data: Buffer;
}

export function writeTar(entries: readonly TarEntry[], mtime = Math.floor(Date.now() / 1000)): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (e.type === 'dir') parts.push(header(e.name.endsWith('/') ? e.name : `${e.name}/`, '5', 0, mtime));
    else {
      parts.push(header(e.name, '0', e.data.length, mtime), e.data, Buffer.alloc((BLOCK - (e.data.length % BLOCK)) % BLOCK));
    }
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

const cstring = (b: Buffer) => {
  const i = b.indexOf(0);
  return b.toString('utf8', 0, i < 0 ? b.length : i);
};

export function readTar(archive: Buffer): TarEntry[] {
  const out: TarEntry[] = [];
  let offset = 0;
  let nextName: string | undefined;
  while (offset + BLOCK <= archive.length) {
    const h = archive.subarray(offset, offset + BLOCK);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(cstring(h.subarray(124, 136)).trim() || '0', 8);
    const type = String.fromCharCode(h[156] || 48);
    const magic = h.toString('latin1', 257, 262);
    const prefix = magic === 'ustar' ? cstring(h.subarray(345, 500)) : '';
    const name = nextName ?? (prefix ? `${prefix}/${cstring(h.subarray(0, 100))}` : cstring(h.subarray(0, 100)));
    const data = archive.subarray(offset + BLOCK, offset + BLOCK + size);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      // PAX records: "<len> key=value\n"; only path matters here.
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'));
      nextName = m?.[1];
      continue;
    }
    if (type === 'L') {
      nextName = cstring(data);
      continue;
    }
    nextName = undefined;
    if (type === '5') out.push({ name, type: 'dir', data: Buffer.alloc(0) });
    else if (type === '0') out.push({ name, type: 'file', data: Buffer.from(data) });
  }
  return out;
}
