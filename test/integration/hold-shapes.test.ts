/**
 * Shaped holds (`--hold-shape`) against the emulator: what the pod runs (busybox sh, emulated), the proofs
 * before and after the hold, and the rows they make. The one-direction timers they exist for are shown
 * through real HAProxy in test/lab/one-direction-timers.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runPlan } from '../../src/probe/runner.js';
import type { ProbeReport } from '../../src/probe/types.js';
import { labPlan } from '../helpers/plan.js';

let lab: EmulatorWithKubeconfig | undefined;
afterEach(async () => {
  await lab?.stop();
  lab = undefined;
});

async function shaped(holdShapes: ('silent' | 'output' | 'input')[], idleCutSeconds?: number): Promise<ProbeReport> {
  lab = await startEmulatorWithKubeconfig(idleCutSeconds ? { faults: { idleCutSeconds } } : {});
  return runPlan(labPlan(lab.emulator.url, { keepalives: ['none'], holdsSeconds: [5], holdShapes }), { skipPreflight: true });
}

describe('--hold-shape against the emulator', () => {
  it('silent, output and input each make their own exec row; port-forward holds stay silent; all survive 5 s', async () => {
    const r = await shaped(['silent', 'output', 'input']);
    expect(r.verdicts.map((v) => `${v.operation} ${v.holdShape ?? 'silent'} ${v.verdict}`)).toEqual([
      'exec silent clean',
      'exec output clean',
      'exec input clean',
      'portforward silent clean',
    ]);
    const exec = r.results.filter((x) => x.operation === 'exec');
    for (const s of exec) expect(s.echoMs, `${s.holdShape ?? 'silent'} ${s.transport}`).not.toBeNull();
    // input: `wc -c` counted every tick written during the hold and then the command exited 0.
    for (const s of exec.filter((x) => x.holdShape === 'input')) expect(s.exitCode).toBe(0);
    // output: the pod writes until stopped; the probe closes it as kubectl does on Ctrl-C, with no exit status.
    for (const s of exec.filter((x) => x.holdShape === 'output')) expect(s).toMatchObject({ exitCode: null, error: null });
  }, 30_000);

  it('a two-way idle cut of 4 s: output ticks every 2 s keep exec alive where silent is cut', async () => {
    const r = await shaped(['silent', 'output'], 4);
    const row = (shape: string) => r.verdicts.find((v) => v.operation === 'exec' && (v.holdShape ?? 'silent') === shape)!;
    expect(row('silent').verdict).toBe('both-broken');
    expect(row('output').verdict).toBe('clean');
  }, 30_000);
});
