/**
 * A probe that could not measure says so, never "both-broken": rejected
 * credentials, a missing pod or namespace, a pod that is not running, a
 * closed port. Exit code 3 and a message naming the fix; CI can tell a broken
 * path (1) from a misconfigured probe (3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { reportDatums } from '../../src/metrics/datums.js';
import { cli } from '../helpers/cli.js';

let lab: EmulatorWithKubeconfig;
let secured: EmulatorWithKubeconfig;
beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({});
  secured = await startEmulatorWithKubeconfig({ tls: true, token: 'the-right-token-123456' });
});
afterAll(async () => {
  await lab.stop();
  await secured.stop();
});

const run = async (kubeconfig: string, ...flags: string[]) => {
  const r = await cli(['run', '--kubeconfig', kubeconfig, '-o', 'json', '--upgrade-timeout', '3000', ...flags]);
  return { code: r.code, stderr: r.stderr, report: JSON.parse(r.stdout) };
};

describe('not measured: exit 3, the reason and the fix, no path verdict', () => {
  it('a pod that does not exist', async () => {
    const { code, report } = await run(lab.kubeconfig, '--pod', 'no-such-pod');
    expect(code).toBe(3);
    for (const v of report.verdicts) {
      expect(v.verdict).toBe('not-measured');
      expect(v.kubectl).toBeNull();
      expect(v.diagnosis).toEqual([
        expect.objectContaining({
          code: 'target-missing',
          summary: expect.stringContaining('no-such-pod'),
          check: expect.stringContaining('kube-stream-probe manifest'),
        }),
      ]);
    }
    expect(report.findings).toEqual([]);
  });

  it('a namespace that does not exist', async () => {
    const { code, report } = await run(lab.kubeconfig, '-n', 'no-such-namespace');
    expect(code).toBe(3);
    expect(report.verdicts[0].diagnosis[0]).toMatchObject({ code: 'target-missing', summary: expect.stringContaining('in no-such-namespace') });
  });

  it('credentials the API server rejects (401)', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join, dirname } = await import('node:path');
    const path = join(dirname(secured.kubeconfig), 'wrong-token');
    writeFileSync(path, (await import('node:fs')).readFileSync(secured.kubeconfig, 'utf8').replace('the-right-token-123456', 'a-wrong-token-1234567'));
    const { code, report } = await run(path);
    expect(code).toBe(3);
    expect(report.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['not-measured', 'not-measured']);
    expect(report.verdicts[0].diagnosis[0]).toMatchObject({ code: 'credentials-rejected', check: expect.stringContaining('kubeconfig user') });
    expect(JSON.stringify(report)).not.toContain('a-wrong-token-1234567');
  });

  it('a port the pod does not listen on: port-forward is not measured, exec still is', async () => {
    const { code, report } = await run(lab.kubeconfig, '--port', '9');
    expect(code).toBe(3);
    const byOp = Object.fromEntries(report.verdicts.map((v: { operation: string }) => [v.operation, v]));
    expect(byOp.exec.verdict).toBe('clean');
    expect(byOp.portforward.verdict).toBe('not-measured');
    expect(byOp.portforward.diagnosis[0]).toMatchObject({
      code: 'target-port-closed',
      summary: expect.stringContaining('port 9'),
      check: expect.stringContaining('--port'),
    });
    // Not "exec and port-forward disagree": that finding is about the path.
    expect(report.findings.map((f: { code: string }) => f.code)).not.toContain('exec-portforward-disagree');
    // Published as ProbeError, and nothing about the unmeasured port-forward sessions.
    const datums = reportDatums(report);
    expect(datums.filter((d) => d.name === 'ProbeError').map((d) => d.value)).toEqual([1]);
    expect(datums.filter((d) => d.name === 'UpgradeSuccess').map((d) => d.dimensions.Operation)).toEqual(['exec', 'exec']);
  });

  it('a broken path still wins: exit 1 when something was found broken and something else not measured', async () => {
    const broken = await startEmulatorWithKubeconfig({ faults: { rejectWebSocket: 400 } });
    try {
      const { code, report } = await run(broken.kubeconfig, '--port', '9');
      expect(report.verdicts.map((v: { operation: string; verdict: string }) => `${v.operation}:${v.verdict}`)).toEqual([
        'exec:websocket-broken',
        'portforward:not-measured',
      ]);
      expect(code).toBe(1);
    } finally {
      await broken.stop();
    }
  });

  it('run --help documents the exit codes', async () => {
    const r = await cli(['run', '--help']);
    expect(r.stdout).toMatch(/^ {2}3 {2}the probe could not measure this path/m);
  });
});

describe('the target found by label when no pod is named', () => {
  it('the first Running pod labelled app.kubernetes.io/name=kube-stream-probe-target', async () => {
    const { code, report } = await run(lab.kubeconfig);
    expect(report.target).toEqual({
      namespace: 'default',
      pod: 'probe-target',
      selector: 'app.kubernetes.io/name=kube-stream-probe-target',
      // As kubectl picks it: the pod's kubectl.kubernetes.io/default-container annotation.
      container: 'main',
      containerSource: 'annotation',
    });
    expect(code).toBe(0);
  });

  it('a selector nothing matches: not measured, saying where it looked', async () => {
    const { code, report } = await run(lab.kubeconfig, '--selector', 'app=nothing');
    expect(code).toBe(3);
    expect(report.verdicts[0].diagnosis[0]).toMatchObject({
      code: 'target-missing',
      summary: expect.stringContaining('No Running pod labelled app=nothing in default'),
    });
  });
});
