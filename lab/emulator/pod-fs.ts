/**
 * The emulated pod's filesystem: in memory, per emulator, just enough for
 * `kubectl cp` (tar in and out, `test -d`) and for looking around in an
 * interactive shell (`ls`, `cat FILE`, `mkdir -p`). Paths are absolute,
 * '/'-separated; `..` and `.` are resolved.
 */
export type PodEntry = { readonly type: 'dir' } | { readonly type: 'file'; readonly data: Buffer };

export class PodFilesystem {
  private readonly entries = new Map<string, PodEntry>([['/', { type: 'dir' }]]);

  constructor() {
    for (const d of ['/tmp', '/etc', '/bin']) this.mkdirp(d);
    this.write('/etc/hostname', Buffer.from('probe-target\n'));
  }

  /** `path` made absolute (against `cwd`) and normal. */
  static resolve(path: string, cwd = '/'): string {
    const parts: string[] = [];
    for (const p of (path.startsWith('/') ? path : `${cwd}/${path}`).split('/')) {
      if (p === '' || p === '.') continue;
      if (p === '..') parts.pop();
      else parts.push(p);
    }
    return `/${parts.join('/')}`;
  }

  stat(path: string): PodEntry | undefined {
    return this.entries.get(PodFilesystem.resolve(path));
  }

  read(path: string): Buffer | undefined {
    const e = this.stat(path);
    return e?.type === 'file' ? e.data : undefined;
  }

  /** Writes a file, creating its parent directories (as tar does). */
  write(path: string, data: Buffer): void {
    const p = PodFilesystem.resolve(path);
    this.mkdirp(parent(p));
    this.entries.set(p, { type: 'file', data });
  }

  mkdirp(path: string): void {
    const p = PodFilesystem.resolve(path);
    let at = '';
    for (const part of p.split('/').filter(Boolean)) {
      at += `/${part}`;
      const e = this.entries.get(at);
      if (e?.type === 'file') throw new Error(`${at}: Not a directory`);
      if (!e) this.entries.set(at, { type: 'dir' });
    }
  }

  /** The entries directly in a directory, sorted. */
  list(dir: string): string[] {
    const d = PodFilesystem.resolve(dir);
    const prefix = d === '/' ? '/' : `${d}/`;
    return [...this.entries.keys()]
      .filter((k) => k !== d && k.startsWith(prefix) && !k.slice(prefix.length).includes('/'))
      .map((k) => k.slice(prefix.length))
      .sort();
  }

  /** `path` and everything under it, parents before children. */
  walk(path: string): string[] {
    const p = PodFilesystem.resolve(path);
    const prefix = p === '/' ? '/' : `${p}/`;
    return [...this.entries.keys()].filter((k) => k === p || k.startsWith(prefix)).sort();
  }
}

export function parent(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}
