/**
 * `--ops attach` (issue 41): the attach subresource, exec's channels on the target's own process, over both
 * transports as kubectl attaches. Its verdicts are compared with real kubectl 1.29 (SPDY only), 1.33 and 1.36
 * (WebSocket first, SPDY fallback) running `kubectl attach -i` on the same paths: the emulator directly, and a real
 * nginx that refuses WebSocket upgrades in front of it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig, startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runKubectl } from '../../lab/kubectl.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startNginx } from '../../lab/real-hops/reverse-proxies.js';
import { cli } from '../helpers/cli.js';
import { requireHop } from '../helpers/hops.js';

type Json = any;
let lab: EmulatorWithKubeconfig;
let nginx: RealHop | undefined;
const paths: Record<string, string> = {};
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({});
  nginx = await requireHop(() => startNginx({ kind: 'refuse-websocket' }, Number(lab.emulator.url.port)));
  paths.direct = lab.kubeconfig;
  paths.nginx = join(tmpdir(), `ksp-attach-nginx-${process.pid}.yaml`);
  writeFileSync(paths.nginx, emulatorKubeconfig(lab.emulator, { server: `http://127.0.0.1:${nginx!.port}` }));
});
afterAll(async () => Promise.all([nginx?.stop(), lab?.stop()]));

const probe = async (kubeconfig: string) => {
  const r = await cli(['run', '--kubeconfig', kubeconfig, '--ops', 'attach', '--hold', '0s,2s', '--no-preflight', '-o', 'json']);
  return { code: r.code, doc: JSON.parse(r.stdout) as Json };
};
const KUBECTL: Record<string, string> = { '1.29': '1.29', '1.33': '1.31-1.37', '1.36': '1.31-1.37' };

describe.each(['direct', 'nginx'])('attach on the %s path', (path) => {
  it('the probe attaches over both transports, holds, and its verdict says what each kubectl does; real kubectl attach -i agrees', async () => {
    const { doc } = await probe(paths[path]!);
    const rows = doc.verdicts.map((v: Json) => `${v.operation} ${v.holdSeconds}s ${v.verdict}`);
    expect(rows).toEqual(path === 'direct' ? ['attach 0s clean', 'attach 2s clean'] : ['attach 0s websocket-broken', 'attach 2s websocket-broken']);
    // The upgrades the emulator saw: attach's path and query (no command), as kubectl's.
    const ups = lab.emulator.upgrades.filter((u) => u.operation === 'attach');
    expect(ups.length).toBeGreaterThan(0);
    for (const u of ups) expect(u.query).toMatch(/^container=main&stderr=true&stdin=true&stdout=true$|^stderr=true&stdin=true&stdout=true$/);
    for (const version of Object.keys(KUBECTL)) {
      const forecast = doc.verdicts[0].kubectl.find((k: Json) => k.client === KUBECTL[version]).outcome;
      const k = await runKubectl(version, ['--kubeconfig', paths[path]!, 'attach', '-i', 'probe-target'], { stdin: 'attached line\n', timeoutMs: 20_000 });
      // works or works-via-fallback: kubectl attaches and echoes; breaks: it would not.
      expect([version, forecast === 'breaks' ? 'breaks' : 'works', k.code, k.stdout]).toEqual([version, 'works', 0, 'attached line\n']);
    }
    if (path === 'nginx') {
      expect(doc.verdicts[0].kubectl.map((k: Json) => `${k.client} ${k.outcome}`)).toEqual([
        '1.29 works',
        '1.30 works-via-fallback',
        '1.31-1.37 works-via-fallback',
        '1.38 works-via-fallback',
        'websocket-only breaks',
      ]);
      const codes = doc.verdicts[0].diagnosis.map((d: Json) => d.code);
      expect(codes).toContain('hop-refused-upgrade');
      expect(doc.verdicts[0].diagnosis.find((d: Json) => d.code === 'silent-fallback').summary).toMatch(
        /^kubectl attach \(1\.31–1\.37\) works on this path today only through its silent fallback/,
      );
    }
  }, 90_000);
});

describe("attach sessions share the container's one process", () => {
  // The emulator broadcasts the process's output to every attached client, as containerd does (main-process.ts), and
  // cuts a connection idle 4 s. Held all at once, the 3 s sessions' last echoes would come out on the 6 s sessions'
  // connections 3 s in, and those would "survive" a 4 s idle cut after 6 s; held one length after another, they are cut.
  it('holds of different lengths run one after another, so a 6 s attach hold is really idle and a 4 s idle cut ends it', async () => {
    const cut = await startEmulatorWithKubeconfig({ faults: { idleCutSeconds: 4 } });
    try {
      const t0 = performance.now();
      const r = await cli([
        'run',
        '--kubeconfig',
        cut.kubeconfig,
        '--ops',
        'attach',
        '--hold',
        '0s,3s,6s',
        '--keepalive',
        'none',
        '--no-preflight',
        '--follow-up-budget',
        '0s',
        '-o',
        'json',
      ]);
      const seconds = (performance.now() - t0) / 1000;
      const doc = JSON.parse(r.stdout) as Json;
      const holds = doc.results.map((x: Json) => `${x.holdSeconds}s ${x.transport} ${x.hold.survived === false ? 'cut' : 'ok'}`).sort();
      expect(holds).toEqual(['0s spdy ok', '0s websocket ok', '3s spdy ok', '3s websocket ok', '6s spdy cut', '6s websocket cut']);
      // One length after another: the 6 s group began after the 3 s group was over.
      const upgrades = cut.emulator.upgrades.filter((u) => u.operation === 'attach');
      expect(upgrades).toHaveLength(6);
      expect(seconds).toBeGreaterThan(3 + 4);
    } finally {
      await cut.stop();
    }
  }, 60_000);
});

describe('a hop that allows only exec among the streaming subresources', () => {
  it('exec works and attach does not: the probe says so (exec-attach-disagree), and real kubectl 1.36 exec works where attach fails', async () => {
    const hop = await requireHop(() => startNginx({ kind: 'exec-only' }, Number(lab.emulator.url.port)));
    const kubeconfig = join(tmpdir(), `ksp-attach-exec-only-${process.pid}.yaml`);
    writeFileSync(kubeconfig, emulatorKubeconfig(lab.emulator, { server: `http://127.0.0.1:${hop!.port}` }));
    try {
      const r = await cli(['run', '--kubeconfig', kubeconfig, '--ops', 'exec,attach', '--hold', '0s', '--no-preflight', '-o', 'json']);
      const doc = JSON.parse(r.stdout) as Json;
      expect(doc.verdicts.map((v: Json) => `${v.operation} ${v.verdict}`)).toEqual(['exec clean', 'attach both-broken']);
      const finding = doc.findings.find((f: Json) => f.code === 'exec-attach-disagree');
      expect(finding.summary).toMatch(/^WebSocket exec works but attach does not \(keepalive "kubectl", hold 0 s\): the attach upgrade was refused\.$/);
      expect(finding.check).toMatch(/pods\/attach/);
      const exec = await runKubectl('1.36', ['--kubeconfig', kubeconfig, 'exec', '-i', 'probe-target', '--', 'cat'], { stdin: 'x\n', timeoutMs: 20_000 });
      const attach = await runKubectl('1.36', ['--kubeconfig', kubeconfig, 'attach', '-i', 'probe-target'], { stdin: 'x\n', timeoutMs: 20_000 });
      expect([exec.code, exec.stdout, attach.code === 0]).toEqual([0, 'x\n', false]);
    } finally {
      await hop?.stop();
    }
  }, 90_000);
});
