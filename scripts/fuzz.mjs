// Runs every fuzz target under jsfuzz for KSP_FUZZ_SECONDS (default 60) with a
// seeded Math.random (KSP_FUZZ_SEED), all targets at once, starting from the
// committed corpus (fuzz/corpus/<target>). Exits non-zero on any crash, and
// leaves the crashing input in .tmp/fuzz/<target>/ to commit to the corpus.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const seconds = Number(process.env.KSP_FUZZ_SECONDS ?? 60);
const seed = process.env.KSP_FUZZ_SEED ?? '20261202';
const targets = ['spdy-frames', 'header-block', 'ws-frames', 'channel'];
const root = resolve('.tmp/fuzz');
rmSync(root, { recursive: true, force: true });
mkdirSync(root, { recursive: true });

const results = await Promise.all(
  targets.map(async (name) => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'corpus'), { recursive: true });
    cpSync(join('fuzz/corpus', name), join(dir, 'corpus'), { recursive: true });
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `import { TARGETS } from ${JSON.stringify(resolve('fuzz/targets.ts'))};\nexport function fuzz(buf: Buffer) { TARGETS[${JSON.stringify(name)}](Buffer.from(buf)); }\n`,
    );
    await build({
      entryPoints: [entry],
      outfile: join(dir, 'target.cjs'),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      logLevel: 'warning',
    });
    const started = Date.now();
    // jsfuzz resolves the target against its working directory.
    const child = spawn(resolve('node_modules/.bin/jsfuzz'), ['target.cjs', 'corpus', '--rss-limit-mb', '512', '--timeout', '10'], {
      cwd: dir,
      env: { ...process.env, KSP_FUZZ_SEED: seed, NODE_OPTIONS: `--require ${resolve('fuzz/seed-random.cjs')}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: jsfuzz ignores SIGINT and runs the target in a forked worker.
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, seconds * 1000);
    const code = await new Promise((r) => child.on('exit', (c, sig) => r(sig ? 0 : c)));
    clearTimeout(timer);
    let crashes = readdirSync(dir).filter((f) => f.startsWith('crash-') || f.startsWith('timeout-'));
    // jsfuzz calls an input that held its worker past --timeout a crash. On a shared 2-core machine running four
    // fuzzers a worker can stall for seconds on any input (seen once: 14.6 s on one that runs in 1 ms), so such an
    // input is replayed alone in a fresh process: it is a hang only if it hangs again.
    const stalled = [];
    if (/timeout reached/.test(output)) {
      crashes = crashes.filter((f) => {
        const started = Date.now();
        const replay = spawnSync(process.execPath, ['-e', `require('./target.cjs').fuzz(require('node:fs').readFileSync(${JSON.stringify(f)}))`], {
          cwd: dir,
          timeout: 10_000,
          encoding: 'utf8',
        });
        const ms = Date.now() - started;
        if (replay.status === 0 && ms < 2_000) {
          stalled.push(`${f} (runs in ${ms} ms alone)`);
          return false;
        }
        return true;
      });
    }
    const execs = /^#(\d+) /gm;
    let last;
    for (const m of output.matchAll(execs)) last = m[1];
    const ranSeconds = Math.round((Date.now() - started) / 1000);
    const ok = crashes.length === 0 && (ranSeconds >= seconds - 1 || stalled.length > 0);
    if (process.env.KSP_FUZZ_DEBUG) console.log(name, code, output.slice(0, 2000));
    return {
      name,
      ok,
      ranSeconds,
      execs: last ?? '?',
      corpus: readdirSync(join(dir, 'corpus')).length,
      crashes,
      stalled,
      tail: output.split('\n').slice(-8).join('\n'),
    };
  }),
);
for (const r of results) {
  console.log(`fuzz ${r.name}: ${r.ok ? 'ok' : 'CRASH'} after ${r.ranSeconds} s, ${r.execs} executions, corpus ${r.corpus}, seed ${seed}`);
  if (r.stalled.length) console.log(`  a worker stall, not a hang: ${r.stalled.join(', ')}`);
  if (!r.ok) console.log(`  crashing inputs in .tmp/fuzz/${r.name}: ${r.crashes.join(', ')}\n${r.tail}`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
