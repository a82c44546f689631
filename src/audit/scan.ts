/**
 * The two escape hatches left in automation: KUBECTL_REMOTE_COMMAND_WEBSOCKETS
 * and KUBECTL_PORT_FORWARD_WEBSOCKETS (kubectl 1.30+), which GA stops
 * honouring. Files under the given directories (Dockerfiles, CI files, shell
 * profiles, manifests…), skipping VCS and dependency trees and anything
 * binary or larger than 2 MB.
 */
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export const TOGGLES = ['KUBECTL_REMOTE_COMMAND_WEBSOCKETS', 'KUBECTL_PORT_FORWARD_WEBSOCKETS'] as const;
const SKIP_DIRS = new Set(['.git', 'node_modules', '.terraform', 'vendor', '.venv', '__pycache__', 'dist', 'cdk.out']);
const MAX_FILE_BYTES = 2 * 1024 * 1024;

export interface ToggleHit {
  readonly file: string;
  readonly line: number;
  readonly toggle: (typeof TOGGLES)[number];
  /** The value it is set to, when the line says (false / true / 0 / 1). */
  readonly value: string | null;
  readonly text: string;
}

export interface ScanResult {
  readonly roots: readonly string[];
  readonly filesScanned: number;
  readonly hits: readonly ToggleHit[];
  /** Roots that could not be read. */
  readonly errors: readonly string[];
}

export function scanForToggles(roots: readonly string[]): ScanResult {
  const hits: ToggleHit[] = [];
  const errors: string[] = [];
  let files = 0;
  const visit = (path: string, root: string) => {
    let st;
    try {
      st = lstatSync(path);
    } catch (err) {
      errors.push(`${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
      return;
    }
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      if (SKIP_DIRS.has(path.split('/').pop()!)) return;
      for (const n of readdirSync(path).sort()) visit(join(path, n), root);
      return;
    }
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return;
    const data = readFileSync(path);
    if (data.subarray(0, 8000).includes(0)) return;
    files++;
    const text = data.toString('utf8');
    if (!TOGGLES.some((t) => text.includes(t))) return;
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      for (const toggle of TOGGLES) {
        if (!line.includes(toggle)) continue;
        // KEY=v, KEY: v, or a Kubernetes env entry (`- name: KEY` with `value: v` on the next line).
        const value =
          new RegExp(`${toggle}["']?\\s*[:=]\\s*["']?([A-Za-z0-9]+)`).exec(line)?.[1] ??
          /^\s*value:\s*["']?([A-Za-z0-9]+)/.exec(lines[i + 1] ?? '')?.[1] ??
          null;
        hits.push({ file: relative(process.cwd(), path) || path, line: i + 1, toggle, value, text: line.trim().slice(0, 200) });
      }
    });
  };
  for (const r of roots) visit(r, r);
  return { roots, filesScanned: files, hits, errors };
}
