/**
 * The kubectl clients on this machine's PATH (what people here really run)
 * and what the kubeconfig's proxy means for them: kubectl < 1.33 cannot dial
 * WebSocket through an https:// proxy-url and works there only by falling
 * back to SPDY (client-go IsHTTPSProxyError, from 1.30.4; fixed in 1.33).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { minorVersion } from '../kube/rest.js';

export interface LocalClient {
  readonly path: string;
  /** e.g. v1.33.5; null when it could not be asked. */
  readonly version: string | null;
  readonly minor: number | null;
  readonly error?: string;
}

function run(path: string): Promise<{ stdout: string; error?: string }> {
  return new Promise((resolve) => {
    execFile(
      path,
      ['version', '--client', '-o', 'json'],
      { timeout: 10_000, env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', KUBECONFIG: '/dev/null' } },
      (err, stdout) => resolve({ stdout, ...(err && !stdout ? { error: err.message.split('\n')[0]! } : {}) }),
    );
  });
}

/** Every executable named kubectl or kubectl.* on PATH, once per real file, with its client version. */
export async function localKubectls(pathEnv: string | undefined): Promise<LocalClient[]> {
  const seen = new Set<string>();
  const found: string[] = [];
  for (const dir of (pathEnv ?? '').split(delimiter).filter(Boolean)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names.filter((x) => x === 'kubectl' || /^kubectl[.-]\d/.test(x)).sort()) {
      const p = join(dir, n);
      try {
        accessSync(p, constants.X_OK);
        const real = realpathSync(p);
        if (seen.has(real)) continue;
        seen.add(real);
        found.push(p);
      } catch {
        continue;
      }
    }
  }
  return Promise.all(
    found.map(async (path): Promise<LocalClient> => {
      const r = await run(path);
      try {
        const v = JSON.parse(r.stdout) as { clientVersion?: { gitVersion?: string; minor?: string } };
        const version = v.clientVersion?.gitVersion ?? null;
        return { path, version, minor: minorVersion(version) };
      } catch {
        return { path, version: null, minor: null, error: r.error ?? 'no version in its output' };
      }
    }),
  );
}
