/**
 * stdin's end (issue 41): kubectl closes stdin when its input ends — v5.channel.k8s.io's close signal on channel 255
 * over WebSocket, the stdin stream's FIN over SPDY — and waits for the exit status. Where that end is lost on the
 * way to the process (the emulator's loseStdinEof fault stands for a kubelet or runtime leg that loses it), real
 * kubectl 1.29 (SPDY), 1.33 and 1.36 (WebSocket) print what came back and never exit; the probe names it
 * `stdin-eof-lost` on both transports, and on a clean path nothing of the kind.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runKubectl } from '../../lab/kubectl.js';
import { cli } from '../helpers/cli.js';

let lossy: EmulatorWithKubeconfig;
let clean: EmulatorWithKubeconfig;
beforeAll(async () => {
  lossy = await startEmulatorWithKubeconfig({ faults: { loseStdinEof: true } });
  clean = await startEmulatorWithKubeconfig({});
});
afterAll(async () => Promise.all([lossy?.stop(), clean?.stop()]));

type Json = any;
const run = async (lab: EmulatorWithKubeconfig) => {
  const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--ops', 'exec', '--hold', '0s', '--keepalive', 'kubectl', '--no-preflight', '-o', 'json']);
  return { code: r.code, doc: JSON.parse(r.stdout) as Json };
};

describe("stdin's end lost on the way to the process", () => {
  it('the probe: stdin-eof-lost on both transports, naming how each closes stdin; exit 1 (kubectl hangs there)', async () => {
    const { code, doc } = await run(lossy);
    expect(code).toBe(1);
    const [v] = doc.verdicts;
    expect(v.verdict).toBe('both-broken');
    const eof = v.diagnosis.filter((d: Json) => d.code === 'stdin-eof-lost');
    expect(eof).toHaveLength(2);
    expect(eof[0].summary).toMatch(
      /^The WebSocket exec echoed, then stdin was closed \(v5\.channel\.k8s\.io's close signal for stdin \(channel 255\)\) and the process had not exited 3 s later/,
    );
    expect(eof[1].summary).toMatch(/^The SPDY exec echoed, then stdin was closed \(the SPDY stdin stream's FIN\)/);
    expect(eof[0].check).toMatch(/kubectl cp` into the pod never exit/);
    for (const s of doc.results) expect(s).toMatchObject({ errorCode: 'EXEC_NO_STATUS', exitCode: null });
    // Every echo came back first: the stream works; only its end is lost.
    for (const s of doc.results) expect(s.firstEchoMs).not.toBeNull();
  });

  it('a clean path: exit statuses come, nothing about stdin', async () => {
    const { code, doc } = await run(clean);
    expect(code).toBe(0);
    expect(doc.verdicts.flatMap((v: Json) => v.diagnosis.map((d: Json) => d.code))).not.toContain('stdin-eof-lost');
    for (const s of doc.results) expect(s.exitCode).toBe(0);
  });

  it.each([
    ['1.29', 'SPDY'],
    ['1.33', 'WebSocket v5'],
    ['1.36', 'WebSocket v5'],
  ])(
    'real kubectl %s (%s): `exec -i … -- cat < input` prints the input and never exits where the end is lost; exits 0 where it is not',
    async (version) => {
      const args = (lab: EmulatorWithKubeconfig) => ['--kubeconfig', lab.kubeconfig, 'exec', '-i', 'probe-target', '--', 'cat'];
      const hung = await runKubectl(version, args(lossy), { stdin: 'line one\nline two\n', timeoutMs: 8_000 });
      expect(hung.stdout).toBe('line one\nline two\n');
      expect(hung.code).toBeNull(); // still running after 8 s: killed by the test
      const fine = await runKubectl(version, args(clean), { stdin: 'line one\nline two\n', timeoutMs: 8_000 });
      expect([fine.code, fine.stdout]).toEqual([0, 'line one\nline two\n']);
    },
    30_000,
  );
});

describe("kubectl cp into the pod where stdin's end is lost", () => {
  const dir = mkdtempSync(join(tmpdir(), 'ksp-eof-cp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['1.29', '1.36'])(
    'real kubectl %s: `cp file pod:/tmp/…` never exits there (tar in the pod waits for the end of its input); exits 0 where the end arrives',
    async (version) => {
      const file = join(dir, `note-${version}.txt`);
      writeFileSync(file, 'a note for the pod\n');
      const cp = (lab: EmulatorWithKubeconfig) =>
        runKubectl(version, ['--kubeconfig', lab.kubeconfig, 'cp', file, `probe-target:/tmp/note-${version}.txt`], { timeoutMs: 8_000 });
      expect((await cp(lossy)).code).toBeNull(); // still running after 8 s
      expect((await cp(clean)).code).toBe(0);
    },
    30_000,
  );

  it("the probe's upload (--transfer-shape upload, the same direction): stdin-eof-lost on both transports there, saying kubectl cp hangs; clean where the end arrives", async () => {
    const up = (lab: EmulatorWithKubeconfig) =>
      cli([
        'run',
        '--kubeconfig',
        lab.kubeconfig,
        '--ops',
        'exec',
        '--hold',
        '0s',
        '--transfer',
        '256KiB',
        '--transfer-shape',
        'upload',
        '--no-preflight',
        '-o',
        'json',
      ]);
    const lost = JSON.parse((await up(lossy)).stdout) as Json;
    const row = lost.verdicts.find((v: Json) => v.transferShape === 'upload');
    expect([row.verdict, row.diagnosis.map((d: Json) => d.code)]).toEqual(['both-broken', ['stdin-eof-lost', 'stdin-eof-lost']]);
    expect(row.diagnosis[0].check).toMatch(/`kubectl cp file pod:\/path` never exits on this path/);
    const fine = JSON.parse((await up(clean)).stdout) as Json;
    expect(fine.verdicts.find((v: Json) => v.transferShape === 'upload').verdict).toBe('clean');
  }, 60_000);
});
