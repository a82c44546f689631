/**
 * Real kubectl 1.29-1.35 against the emulated API server: the emulator is
 * proven by the client that defines the protocol. Every case asserts, from
 * the emulator's own record, which transport and subprotocol kubectl used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL_VERSIONS, kubectlPath, pattern, runKubectl, tcpEcho, withKubectlPortForward } from '../../lab/kubectl.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';

type Wire = 'websocket' | 'spdy';

/** The environment that makes `version` use `wire` (its default where it has one). */
function execEnv(version: string, wire: Wire): Record<string, string> {
  if (wire === 'spdy') return { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
  return version === '1.29' ? { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'true' } : {};
}
function portForwardEnv(version: string, wire: Wire): Record<string, string> {
  if (wire === 'spdy') return { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };
  return version === '1.30' ? { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'true' } : {};
}

describe('real kubectl binaries are installed', () => {
  it.each(KUBECTL_VERSIONS)('kubectl %s exists (fails loudly when missing)', (v) => {
    expect(() => kubectlPath(v)).not.toThrow();
  });
});

describe.each(KUBECTL_VERSIONS)('kubectl %s against the emulator', (version) => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig();
  });
  afterAll(() => lab.stop());

  const k = (args: string[], env: Record<string, string>, stdin?: string) => runKubectl(version, ['--kubeconfig', lab.kubeconfig, ...args], { env, stdin });

  for (const wire of ['websocket', 'spdy'] as const) {
    const expectExecUpgrade = (from: number) => {
      const ups = lab.since(from);
      expect(ups.map((u) => `${u.method} ${u.transport} ${u.status}`)).toEqual([wire === 'websocket' ? 'GET websocket 101' : 'POST spdy 101']);
      // WebSocket exec is v5; over SPDY the "kubelet" picks v4 from kubectl's v5..v1 offer.
      expect(ups[0]!.subprotocol).toBe(wire === 'websocket' ? 'v5.channel.k8s.io' : 'v4.channel.k8s.io');
      return ups[0]!;
    };

    it(`exec -- echo over ${wire}`, async () => {
      const from = lab.emulator.upgrades.length;
      const r = await k(['exec', 'probe-target', '--', 'echo', 'hello', 'from', version], execEnv(version, wire));
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(`hello from ${version}\n`);
      expect(r.code).toBe(0);
      const up = expectExecUpgrade(from);
      expect(up.query).toBe(`command=echo&command=hello&command=from&command=${version}&container=main&stderr=true&stdout=true`);
    });

    it(`exec -i -- cat with piped stdin over ${wire}`, async () => {
      const from = lab.emulator.upgrades.length;
      const input = 'line one\nline two\n' + 'x'.repeat(100_000) + '\n';
      const r = await k(['exec', '-i', 'probe-target', '--', 'cat'], execEnv(version, wire), input);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(input);
      const up = expectExecUpgrade(from);
      if (wire === 'spdy') expect(up.streams.map((s) => s.streamtype)).toEqual(['error', 'stdin', 'stdout', 'stderr']);
    });

    it(`exit code propagates over ${wire} (sh -c 'exit 5' gives 5)`, async () => {
      const from = lab.emulator.upgrades.length;
      const r = await k(['exec', 'probe-target', '--', 'sh', '-c', 'exit 5'], execEnv(version, wire));
      expect(r.code).toBe(5);
      expect(r.stderr).toContain('command terminated with exit code 5');
      expectExecUpgrade(from);
    });

    // kubectl 1.29 has no WebSocket port-forward at all (KEP-4006: it arrives in 1.30 as opt-in).
    if (!(version === '1.29' && wire === 'websocket')) {
      it(`port-forward and a 256 KiB TCP echo round trip over ${wire}`, async () => {
        const from = lab.emulator.upgrades.length;
        const data = pattern(256 * 1024);
        const { value } = await withKubectlPortForward(
          version,
          ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'],
          portForwardEnv(version, wire),
          (port) => tcpEcho(port, data),
        );
        expect(value.equals(data)).toBe(true);
        const ups = lab.since(from);
        expect(ups.map((u) => `${u.method} ${u.transport} ${u.status} ${u.subprotocol}`)).toEqual([
          wire === 'websocket' ? 'GET websocket 101 SPDY/3.1+portforward.k8s.io' : 'POST spdy 101 portforward.k8s.io',
        ]);
        expect(ups[0]!.streams).toEqual(
          [
            { streamtype: 'error', port: '8080', requestid: '0' },
            { streamtype: 'data', port: '8080', requestid: '0' },
          ].map((h) => expect.objectContaining(h)),
        );
      });
    }
  }

  if (version === '1.29') {
    it('port-forward stays on SPDY by default (no WebSocket port-forward in 1.29)', async () => {
      const from = lab.emulator.upgrades.length;
      await withKubectlPortForward(version, ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], {}, (port) => tcpEcho(port, Buffer.from('ping')));
      expect(lab.since(from).map((u) => u.method)).toEqual(['POST']);
    });
  }
});

describe("kubectl 1.33 attach -i (the container's main process is cat)", () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig();
  });
  afterAll(() => lab.stop());

  for (const wire of ['websocket', 'spdy'] as const) {
    it(`attach -i echoes piped stdin over ${wire}`, async () => {
      const from = lab.emulator.upgrades.length;
      const r = await runKubectl('1.33', ['--kubeconfig', lab.kubeconfig, 'attach', '-i', 'probe-target'], {
        env: execEnv('1.33', wire),
        stdin: 'attached line\n',
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('attached line\n');
      const ups = lab.since(from);
      expect(ups.map((u) => `${u.operation} ${u.transport} ${u.status}`)).toEqual([`attach ${wire} 101`]);
      expect(ups[0]!.query).toBe('container=main&stderr=true&stdin=true&stdout=true');
    });
  }
});

describe('kubectl falls back to SPDY when WebSocket is refused', () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ faults: { rejectWebSocket: 400 } });
  });
  afterAll(() => lab.stop());

  for (const version of ['1.31', '1.33', '1.34', '1.35'] as const) {
    it(`kubectl ${version} exec: GET refused with 400, then POST works`, async () => {
      const from = lab.emulator.upgrades.length;
      const r = await runKubectl(version, ['--kubeconfig', lab.kubeconfig, 'exec', 'probe-target', '--', 'echo', 'fallback']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('fallback\n');
      expect(lab.since(from).map((u) => `${u.method} ${u.status}`)).toEqual(['GET 400', 'POST 101']);
    });

    it(`kubectl ${version} port-forward: GET refused with 400, then POST works`, async () => {
      const from = lab.emulator.upgrades.length;
      const { value } = await withKubectlPortForward(version, ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'], {}, (port) =>
        tcpEcho(port, Buffer.from('through the fallback')),
      );
      expect(value.toString()).toBe('through the fallback');
      expect(lab.since(from).map((u) => `${u.method} ${u.status}`)).toEqual(['GET 400', 'POST 101']);
    });
  }
});

describe('kubectl 1.33 over TLS with a bearer token', () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ tls: true, token: 'lab-secret-token-0123456789' });
  });
  afterAll(() => lab.stop());

  it('get pods lists the target pod', async () => {
    const r = await runKubectl('1.33', ['--kubeconfig', lab.kubeconfig, 'get', 'pods']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+READY\s+STATUS/m);
    // The manifest's three containers (main, echo, tty), all running.
    expect(r.stdout).toMatch(/^probe-target\s+3\/3\s+Running/m);
  });

  for (const wire of ['websocket', 'spdy'] as const) {
    it(`exec and port-forward over ${wire}`, async () => {
      const from = lab.emulator.upgrades.length;
      const r = await runKubectl('1.33', ['--kubeconfig', lab.kubeconfig, 'exec', 'probe-target', '--', 'sh', '-c', 'echo tls; exit 3'], {
        env: execEnv('1.33', wire),
      });
      expect(r.stdout).toBe('tls\n');
      expect(r.code).toBe(3);
      const { value } = await withKubectlPortForward(
        '1.33',
        ['--kubeconfig', lab.kubeconfig, 'pod/probe-target', '0:8080'],
        portForwardEnv('1.33', wire),
        (port) => tcpEcho(port, Buffer.from('tls echo')),
      );
      expect(value.toString()).toBe('tls echo');
      expect(lab.since(from).map((u) => `${u.transport} ${u.status}`)).toEqual([`${wire} 101`, `${wire} 101`]);
    });
  }

  it('a wrong token is refused with 401 on REST', async () => {
    const r = await runKubectl('1.33', ['--kubeconfig', lab.kubeconfig, '--token', 'wrong', 'get', 'pods']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Unauthorized|must be logged in/);
  });
});

describe('kubectl 1.35 against a 1.35 server that enforces create for WebSocket upgrades', () => {
  let lab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ serverVersion: 'v1.35.0', rbac: { model: '1.35', verbs: ['create'] } });
  });
  afterAll(() => lab.stop());

  it('with only "create": the WebSocket GET gets 403 from the API server, kubectl falls back to SPDY and works', async () => {
    const from = lab.emulator.upgrades.length;
    const r = await runKubectl('1.35', ['--kubeconfig', lab.kubeconfig, 'exec', 'probe-target', '--', 'echo', 'rbac']);
    expect(r.stdout).toBe('rbac\n');
    expect(r.code).toBe(0);
    expect(lab.since(from).map((u) => `${u.method} ${u.status}`)).toEqual(['GET 403', 'POST 101']);
  });
});
