/** The Lambda bundle exactly as the construct builds it: size, and time to load it with node. */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BenchFailure, median, type Row } from './common.js';

const OUT = join('.tmp', 'bench-bundle');

function load(file: string): Promise<number> {
  const script = `const t = performance.now(); const m = await import(${JSON.stringify(file)}); if (typeof m.handler !== 'function') process.exit(3); process.stdout.write(String(performance.now() - t));`;
  return new Promise((resolve, reject) => {
    const env = {
      ...process.env,
      KSP_LOCATION_CONFIG: JSON.stringify({
        location: 'bench',
        region: 'eu-west-1',
        clusters: [
          {
            name: 'c',
            endpoint: 'https://127.0.0.1:1',
            auth: { type: 'eks', clusterName: 'c' },
            caData: 'QQ==',
            target: { namespace: 'n', pod: 'p', port: 8080 },
          },
        ],
      }),
    };
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => (code === 0 ? resolve(Number(out)) : reject(new BenchFailure(`the bundle did not load (exit ${code}): ${err.slice(-300)}`))));
  });
}

export async function bundleBench(): Promise<Row[]> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const file = join(process.cwd(), OUT, 'index.mjs');
  // The options of infra/stream-probe.ts (NodejsFunction bundling).
  await build({
    entryPoints: ['functions/probe.ts'],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minify: true,
    mainFields: ['module', 'main'],
    external: ['@aws-sdk/*'],
    banner: { js: "import { createRequire as __ksp_cr } from 'node:module'; const require = __ksp_cr(import.meta.url);" },
    logLevel: 'warning',
  });
  const kb = statSync(file).size / 1000;
  const times: number[] = [];
  for (let i = 0; i < 7; i++) times.push(await load(file));
  const ms = median(times);
  return [
    { bench: 'Lambda bundle', what: 'size, minified (AWS SDK from the runtime)', value: kb, unit: 'KB', target: '< 1000 KB', pass: kb < 1000 },
    {
      bench: 'Lambda bundle',
      what: 'import() time with node, p50 of 7 (cold process; SDK clients load on first use)',
      value: ms,
      unit: 'ms',
      target: '< 150 ms',
      pass: ms < 150,
    },
  ];
}
