/**
 * `kube-stream-probe run` end to end against the emulator through its
 * kubeconfig: the JSON contract with real numbers, exit codes, and every
 * kubeconfig field kubectl honours, with real proxies where one is named.
 */
import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { issueServerCertificate, selfSignedCertificate } from '../../lab/emulator/tls.js';
import { runKubectl } from '../../lab/kubectl.js';
import { startDante, startSquid, startTlsFront } from '../../lab/real-hops/proxies.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { cli } from '../helpers/cli.js';
import { FAIL_ON, exitCodeFor } from '../../src/cli/run-command.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { requireHop } from '../helpers/hops.js';

const dir = mkdtempSync(join(tmpdir(), 'ksp-cli-'));
let n = 0;
function writeConfig(doc: unknown): string {
  const p = join(dir, `kubeconfig-${++n}`);
  writeFileSync(p, typeof doc === 'string' ? doc : YAML.stringify(doc));
  return p;
}
const base = ['--hold', '0s', '--no-preflight', '-o', 'json'];

describe('run -o json against the emulator', () => {
  let lab: EmulatorWithKubeconfig;
  afterEach(async () => lab?.stop());

  it('prints the architecture.md document with real numbers, exit 0 when clean', async () => {
    lab = await startEmulatorWithKubeconfig({});
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '-o', 'json', '--location', 'ci-runner']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ location: 'ci-runner', cluster: 'kube-stream-probe-lab', server: { version: 'v1.33.1' } });
    // 2 operations × 2 transports with kubectl's keepalive, and an SDK client's exec and port-forward (the default
    // keepalives kubectl,sdk): WebSocket only, exec over v5, port-forward over the kubelet's legacy protocol.
    expect(doc.results).toHaveLength(6);
    const sdk = doc.results.filter((res: { keepalive: string }) => res.keepalive === 'sdk');
    expect(sdk.map((res: { operation: string; transport: string; subprotocol: string }) => [res.operation, res.transport, res.subprotocol])).toEqual([
      ['exec', 'websocket', 'v5.channel.k8s.io'],
      ['portforward', 'websocket', 'v4.channel.k8s.io'],
    ]);
    for (const res of doc.results) {
      expect(Object.keys(res)).toEqual(
        expect.arrayContaining(['operation', 'transport', 'subprotocol', 'keepalive', 'holdSeconds', 'upgrade', 'hold', 'echoMs', 'exitCode']),
      );
      expect(res.upgrade).toMatchObject({ ok: true, status: 101, error: null });
      expect(res.upgrade.handshakeMs).toBeGreaterThan(0);
      expect(res.upgrade.phases.tcpMs).toBeGreaterThanOrEqual(0);
    }
    expect(doc.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['clean', 'clean']);
    expect(doc.rbac).toHaveLength(6);
  });

  it('an idle cut at 2 s with keepalive none: disconnectSeconds within 0.5 s of 2, verdict and diagnosis say so, exit 1 with --fail-on any', async () => {
    lab = await startEmulatorWithKubeconfig({ faults: { idleCutSeconds: 2 } });
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '-o', 'json', '--hold', '3s', '--keepalive', 'none', '--no-preflight', '--fail-on', 'any']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    for (const res of doc.results) {
      expect(res.hold.survived).toBe(false);
      expect(Math.abs(res.hold.disconnectSeconds - 2)).toBeLessThan(0.5);
    }
    for (const v of doc.verdicts) {
      expect(v.verdict).toBe('both-broken');
      expect(v.diagnosis[0].code).toBe('idle-timeout');
      expect(v.diagnosis[0].summary).toMatch(/cut after [12]\.\d s with no byte moving/);
    }
  });

  it("--fail-on: an idle cut at 7 s that kubectl's 5 s pings prevent exits 0 for kubectl (the default) and 1 for websocket-only and any", async () => {
    lab = await startEmulatorWithKubeconfig({ faults: { idleCutSeconds: 7 } });
    const args = ['run', '--kubeconfig', lab.kubeconfig, '-o', 'json', '--hold', '9s', '--keepalive', 'kubectl,none', '--ops', 'exec', '--no-preflight'];
    const kubectl = await cli(args);
    const rows = JSON.parse(kubectl.stdout).verdicts.map((v: any) => `${v.keepalive} ${v.verdict}`);
    expect(rows).toEqual(['kubectl clean', 'none both-broken']);
    expect(kubectl.code).toBe(0);
    expect((await cli([...args, '--fail-on', 'websocket-only'])).code).toBe(1);
    // The same report under each rule, as run applies it.
    const report = JSON.parse(kubectl.stdout);
    expect(FAIL_ON.map((f) => exitCodeFor([report], f))).toEqual([0, 1, 1]);
    const bad = await cli([...args, '--fail-on', 'sdk']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--fail-on: "sdk" is not one of kubectl, websocket-only, any/);
  }, 90_000);

  it('piped (no terminal), a 12 s hold prints one plain progress line at 10 s on stderr, not silence and not carriage returns', async () => {
    lab = await startEmulatorWithKubeconfig({});
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--hold', '12s', '--ops', 'exec', '--keepalive', 'kubectl', '--no-preflight', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^kube-stream-probe: 1[01]s \/ 12s: 2 holding, 0 lost\n$/);
    expect(r.stderr).not.toContain('\r');
  }, 60_000);

  it('--transfer 2MiB on a lost tail: the cp rows in the table with their numbers and units, the finding, exit 1', async () => {
    lab = await startEmulatorWithKubeconfig({ faults: { truncateTailBytes: 4096 } });
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--no-preflight', '--transfer', '2MiB', '--ops', 'exec']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^exec\s+kubectl\s+0s\s+ok\s+ok\s+clean/m);
    expect(r.stdout).toMatch(/^exec\s+kubectl\s+cp 2MiB\s+fail\s+fail\s+both-broken\s+BREAKS\s+BREAKS\s+BREAKS\s+BREAKS\s+BREAKS$/m);
    expect(r.stdout).toMatch(/LOST TAIL 4096B \(2093056\/2097152B back, exit 0\)/);
    expect(r.stdout).toContain('[transfer-tail-lost]');
    expect(r.stdout).toContain('"error: unexpected EOF"');
    const usage = await cli(['run', '--kubeconfig', lab.kubeconfig, '--transfer', '8MB']);
    expect({ code: usage.code, err: usage.stderr.split('\n')[0] }).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--transfer "8MB" is not a transfer size/),
    });
  });

  it('the table output names the verdicts and the units', async () => {
    lab = await startEmulatorWithKubeconfig({ faults: { rejectWebSocket: 400 } });
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--no-preflight']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^exec\s+kubectl\s+0s\s+ok\s+fail\s+websocket-broken\s+ok\s+fallback\s+fallback\s+fallback\s+BREAKS$/m);
    expect(r.stdout).toMatch(/^portforward\s+kubectl\s+0s\s+ok\s+fail\s+websocket-broken\s+ok\s+ok\s+fallback\s+fallback\s+BREAKS$/m);
    expect(r.stdout).toContain('HANDSHAKE ms');
    expect(r.stdout).toContain('[silent-fallback]');
  });
});

describe('usage and configuration errors: one line naming what was wrong, exit 2', () => {
  const cases: Array<[string, () => string[], RegExp]> = [
    ['unknown flag', () => ['run', '--bogus'], /--bogus is not a known flag \(--help lists them\)/],
    ['a misspelt flag', () => ['run', '--hlod', '5s'], /--hlod is not a known flag: did you mean "--hold"\?/],
    ['bad --ops value', () => ['run', '--ops', 'exec,shell'], /--ops "shell" is not one of exec, portforward, attach/],
    ['bad --hold value', () => ['run', '--hold', '5 minutes'], /--hold "5 minutes" is not a duration/],
    ['unreadable kubeconfig', () => ['run', '--kubeconfig', join(dir, 'missing')], /kubeconfig .*missing cannot be read \(ENOENT\)/],
    ['malformed YAML', () => ['run', '--kubeconfig', writeConfig('clusters: [\n  - name: x\n   cluster: {')], /not valid YAML \(line \d+\)/],
    [
      'missing context',
      () => ['run', '--kubeconfig', writeConfig({ 'current-context': 'nope', contexts: [], clusters: [], users: [] })],
      /contexts has no entry named "nope"/,
    ],
    ['--context that does not exist', () => ['run', '--kubeconfig', writeConfig(minimal()), '--context', 'other'], /contexts has no entry named "other"/],
    [
      'server not a URL',
      () => ['run', '--kubeconfig', writeConfig(minimal({ server: 'not a url' }))],
      /clusters\[c\]\.cluster\.server "not a url" is not a URL/,
    ],
    [
      'unreadable certificate-authority',
      () => ['run', '--kubeconfig', writeConfig(minimal({ 'certificate-authority': 'nope.crt' }))],
      /clusters\[c\]\.cluster\.certificate-authority file .*nope\.crt cannot be read/,
    ],
    [
      'insecure plus CA',
      () => ['run', '--kubeconfig', writeConfig(minimal({ 'insecure-skip-tls-verify': true, 'certificate-authority-data': 'QQ==' }))],
      /sets both insecure-skip-tls-verify and a certificate authority/,
    ],
    [
      'a certificate authority that is not PEM (kubectl refuses it too: test/interop/kubeconfig-pem.test.ts)',
      () => ['run', '--kubeconfig', writeConfig(minimal({ 'certificate-authority-data': Buffer.from('not PEM').toString('base64') }))],
      /clusters\[c\]\.cluster\.certificate-authority-data holds no PEM certificate that parses/,
    ],
    [
      'bad proxy-url scheme',
      () => ['run', '--kubeconfig', writeConfig(minimal({ 'proxy-url': 'ftp://proxy:21' }))],
      /proxy-url scheme ftp: is not http, https or socks5/,
    ],
    [
      'exec plugin with an unknown apiVersion',
      () => ['run', '--kubeconfig', writeConfig(minimal({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } }))],
      /users\[u\]\.user\.exec\.apiVersion must be one of/,
    ],
    [
      'exec plugin that fails',
      () => ['run', '--kubeconfig', writeConfig(minimal({}, { exec: plugin('echo "boom: no credentials" >&2; exit 3') }))],
      /exec plugin .* failed with exit code 3: boom: no credentials/,
    ],
    [
      'exec plugin that prints garbage',
      () => ['run', '--kubeconfig', writeConfig(minimal({}, { exec: plugin('echo "<html>login</html>"') }))],
      /printed something that is not ExecCredential JSON/,
    ],
    [
      'exec plugin that is not installed',
      () => [
        'run',
        '--kubeconfig',
        writeConfig(minimal({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/nonexistent/aws', installHint: 'Install the AWS CLI.' } })),
      ],
      /could not be started \(ENOENT\)\. Install the AWS CLI\./,
    ],
  ];
  for (const [name, argv, message] of cases) {
    it(name, async () => {
      const r = await cli(argv());
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toMatch(message);
    });
  }
});

function minimal(cluster: Record<string, unknown> = {}, user: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'ctx',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
  };
}

/** A real exec credential plugin: a shell script. */
function plugin(script: string, apiVersion = 'client.authentication.k8s.io/v1') {
  const p = join(dir, `plugin-${++n}.sh`);
  writeFileSync(p, `#!/bin/sh\n${script}\n`);
  chmodSync(p, 0o755);
  return { apiVersion, command: p, args: [], env: [{ name: 'PLUGIN_MARK', value: 'set' }] };
}

describe('kubeconfig fields against a TLS emulator', () => {
  let lab: EmulatorWithKubeconfig;
  let certLab: EmulatorWithKubeconfig;
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ tls: true, token: 'field-test-token-42' });
    certLab = await startEmulatorWithKubeconfig({ tls: true, clientCertAuth: true });
  });
  afterAll(async () => {
    await lab.stop();
    await certLab.stop();
  });
  const doc = (e = lab, mutate: (d: any) => void = () => undefined) => {
    const d = YAML.parse(emulatorKubeconfig(e.emulator));
    mutate(d);
    return writeConfig(d);
  };
  const clean = async (path: string, extra: string[] = []) => {
    const r = await cli(['run', '--kubeconfig', path, ...base, ...extra]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['clean', 'clean']);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout);
  };

  it('certificate-authority-data and token', () => clean(doc()));

  it('certificate-authority as a relative file path, tokenFile as a relative path', async () => {
    writeFileSync(join(dir, 'ca.crt'), lab.emulator.tls!.caPem);
    writeFileSync(join(dir, 'token.txt'), 'field-test-token-42\n');
    await clean(
      doc(lab, (d) => {
        delete d.clusters[0].cluster['certificate-authority-data'];
        d.clusters[0].cluster['certificate-authority'] = 'ca.crt';
        delete d.users[0].user.token;
        d.users[0].user.tokenFile = 'token.txt';
      }),
    );
  });

  it('without the CA, TLS verification is on and fails (unreachable, DIAL_TLS)', async () => {
    const r = await cli(['run', '--kubeconfig', doc(lab, (d) => delete d.clusters[0].cluster['certificate-authority-data']), ...base]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.results[0].upgrade.errorCode).toBe('DIAL_TLS');
    // A peer answered with a certificate: a finding about the path, not an unreachable server.
    expect(out.verdicts.map((v: any) => v.verdict)).toEqual(['both-broken', 'both-broken']);
  });

  it('an API server that refuses connections: one rule in run and audit (verdict unreachable, exit 3 in both; never both-broken)', async () => {
    const dead = doc(lab, (d) => (d.clusters[0].cluster.server = 'https://127.0.0.1:9'));
    const run = await cli(['run', '--kubeconfig', dead, ...base]);
    expect(run.code).toBe(3);
    const verdicts = JSON.parse(run.stdout).verdicts;
    expect(verdicts.map((v: any) => v.verdict)).toEqual(['unreachable', 'unreachable']);
    expect(verdicts[0].diagnosis.map((d: any) => d.code)).toEqual(['unreachable']);
    expect(verdicts[0].diagnosis[0].summary).toMatch(/^Could not reach the API server for exec over either transport .*ECONNREFUSED/);
    const audit = await cli(['audit', '--kubeconfig', dead]);
    expect(audit.code).toBe(3);
    expect(audit.stdout).toMatch(/the A\/B could not reach the API server/);
  });

  it('insecure-skip-tls-verify: true skips verification', () =>
    clean(
      doc(lab, (d) => {
        delete d.clusters[0].cluster['certificate-authority-data'];
        d.clusters[0].cluster['insecure-skip-tls-verify'] = true;
      }),
    ));

  it('tls-server-name: the certificate is checked against it, not the dialled address', async () => {
    await clean(doc(lab, (d) => (d.clusters[0].cluster['tls-server-name'] = 'kubernetes.default.svc')));
    const r = await cli(['run', '--kubeconfig', doc(lab, (d) => (d.clusters[0].cluster['tls-server-name'] = 'wrong.example')), ...base]);
    expect(JSON.parse(r.stdout).results[0].upgrade.errorCode).toBe('DIAL_TLS');
  });

  it('client-certificate-data and client-key-data authenticate', () =>
    clean(
      doc(certLab, (d) => {
        d.users[0].user = {
          'client-certificate-data': Buffer.from(certLab.emulator.tls!.clientCertPem).toString('base64'),
          'client-key-data': Buffer.from(certLab.emulator.tls!.clientKeyPem).toString('base64'),
        };
      }),
    ));

  it('client-certificate and client-key as files', async () => {
    writeFileSync(join(dir, 'client.crt'), certLab.emulator.tls!.clientCertPem);
    writeFileSync(join(dir, 'client.key'), certLab.emulator.tls!.clientKeyPem);
    await clean(doc(certLab, (d) => (d.users[0].user = { 'client-certificate': join(dir, 'client.crt'), 'client-key': join(dir, 'client.key') })));
  });

  for (const apiVersion of ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']) {
    it(`an exec credential plugin (${apiVersion}) gets KUBERNETES_EXEC_INFO and its env, and its token is used`, async () => {
      const script = `
[ "$PLUGIN_MARK" = set ] || { echo "env not passed" >&2; exit 9; }
echo "$KUBERNETES_EXEC_INFO" | grep -q '"kind":"ExecCredential"' || { echo "no exec info" >&2; exit 8; }
printf '{"apiVersion":"${apiVersion}","kind":"ExecCredential","status":{"token":"field-test-token-42"}}'`;
      await clean(doc(lab, (d) => (d.users[0].user = { exec: plugin(script, apiVersion) })));
    });
  }

  it('contexts and namespaces: --context picks another context; -n overrides its namespace', async () => {
    const path = doc(lab, (d) => {
      d.contexts.push({ name: 'second', context: { cluster: d.clusters[0].name, user: d.users[0].name, namespace: 'elsewhere' } });
    });
    // namespace "elsewhere" has no target pod: not measured, and said where it looked
    const r = await cli(['run', '--kubeconfig', path, '--context', 'second', ...base]);
    const doc1 = JSON.parse(r.stdout);
    expect(doc1.cluster).toBe('second');
    expect(doc1.target).toMatchObject({ namespace: 'elsewhere', pod: null });
    expect(doc1.verdicts[0].diagnosis[0]).toMatchObject({ code: 'target-missing', summary: expect.stringContaining('in elsewhere') });
    expect(r.code).toBe(3);
    await clean(path, ['--context', 'second', '-n', 'default']);
  });

  it('KUBECONFIG in the environment is used when no --kubeconfig is given', async () => {
    const r = await cli(['run', ...base], { KUBECONFIG: doc() });
    expect(r.code).toBe(0);
  });
});

describe('proxy-url through real proxies', () => {
  let lab: EmulatorWithKubeconfig;
  const hops: RealHop[] = [];
  beforeAll(async () => {
    lab = await startEmulatorWithKubeconfig({ tls: true, token: 'proxy-test-token-77' });
  });
  afterAll(async () => {
    await Promise.all(hops.map((h) => h.stop()));
    await lab.stop();
  });
  const via = (proxyUrl: string) => writeConfig(YAML.parse(emulatorKubeconfig(lab.emulator, { proxyUrl })));

  it('http:// proxy (squid CONNECT): both transports, proxy phase timed', async ({ skip }) => {
    const squid = await requireHop(() => startSquid());
    if (!squid) return skip('squid is not installed');
    hops.push(squid);
    const r = await cli(['run', '--kubeconfig', via(`http://127.0.0.1:${squid.port}`), ...base]);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.server.proxy).toBe(`http://127.0.0.1:${squid.port}`);
    for (const res of d.results) expect(res.upgrade.phases.proxyMs).toBeGreaterThan(0);
  });

  it('socks5:// proxy (dante): both transports', async ({ skip }) => {
    const dante = await requireHop(() => startDante());
    if (!dante) return skip('dante-server is not installed');
    hops.push(dante);
    const r = await cli(['run', '--kubeconfig', via(`socks5://127.0.0.1:${dante.port}`), ...base]);
    expect(r.code).toBe(0);
  });

  it('https:// proxy (TLS to the proxy, verified with the cluster CA, then CONNECT)', async ({ skip }) => {
    const squid = await requireHop(() => startSquid());
    if (!squid) return skip('squid is not installed');
    hops.push(squid);
    const front = await requireHop(() => startTlsFront('tls-proxy', squid.port, lab.emulator.tls!.certPem + lab.emulator.tls!.keyPem));
    if (!front) return skip('haproxy is not installed');
    hops.push(front);
    const r = await cli(['run', '--kubeconfig', via(`https://127.0.0.1:${front.port}`), ...base]);
    expect(r.code).toBe(0);
  });

  it('https:// proxy with a certificate from another CA: refused, and the advice is certificate-authority (kubectl trusts only it, not the system roots)', async ({
    skip,
  }) => {
    const squid = await requireHop(() => startSquid());
    if (!squid) return skip('squid is not installed');
    hops.push(squid);
    const corp = selfSignedCertificate(['IP:127.0.0.1'], 'Corp Proxy CA');
    const front = await requireHop(() => startTlsFront('tls-proxy-corp-ca', squid.port, corp.certPem + corp.keyPem));
    if (!front) return skip('haproxy is not installed');
    hops.push(front);
    const kubeconfig = via(`https://127.0.0.1:${front.port}`);
    const r = await cli(['run', '--kubeconfig', kubeconfig, ...base]);
    expect(r.code).not.toBe(0);
    const d = JSON.parse(r.stdout);
    for (const res of d.results)
      expect(res.upgrade).toMatchObject({ ok: false, errorCode: 'DIAL_TLS', tls: { peer: 'proxy', untrusted: true, issuer: 'CN=Corp Proxy CA' } });
    for (const v of d.verdicts) {
      expect(v.verdict).toBe('both-broken');
      expect(v.diagnosis[0].summary).toContain(`https:// proxy's (https://127.0.0.1:${front.port}) certificate is not trusted`);
      expect(v.diagnosis[0].check).toContain('certificate-authority');
      expect(v.diagnosis[0].check).toContain('proxy');
    }
    const k = await runKubectl('1.33', ['--kubeconfig', kubeconfig, 'exec', 'probe-target', '--', 'echo', 'hi'], {});
    expect(k.code).not.toBe(0);
    expect(k.stderr).toMatch(/proxyconnect tcp: tls: failed to verify certificate: x509: certificate signed by unknown authority/);
  });

  it('https:// proxy whose certificate names another host: refused before CONNECT, the error names the proxy, as kubectl 1.33 refuses it', async ({ skip }) => {
    const squid = await requireHop(() => startSquid());
    if (!squid) return skip('squid is not installed');
    hops.push(squid);
    const other = issueServerCertificate(['DNS:proxy.corp.example']);
    const front = await requireHop(() => startTlsFront('tls-proxy-other-name', squid.port, other.certPem + other.keyPem));
    if (!front) return skip('haproxy is not installed');
    hops.push(front);
    const kubeconfig = via(`https://127.0.0.1:${front.port}`);
    const r = await cli(['run', '--kubeconfig', kubeconfig, ...base]);
    const d = JSON.parse(r.stdout);
    for (const res of d.results) {
      expect(res.upgrade).toMatchObject({ ok: false, errorCode: 'DIAL_TLS', tls: { peer: 'proxy', checkedName: '127.0.0.1' } });
      expect(res.upgrade.error).toMatch(/the proxy's certificate was checked against 127\.0\.0\.1.*DNS:proxy\.corp\.example/);
    }
    // Both transports fail alike: not a WebSocket-only hop, and the advice is about the proxy's certificate.
    for (const v of d.verdicts) {
      expect(v.verdict).toBe('both-broken');
      expect(v.diagnosis.map((x: { code: string }) => x.code)).toEqual(['tls-certificate', 'tls-certificate']);
      expect(v.diagnosis[0].summary).toContain(`https:// proxy's (https://127.0.0.1:${front.port})`);
      expect(v.diagnosis[0].check).toContain('proxy-url');
      expect(v.diagnosis[0].check).not.toContain('tls-server-name');
    }
    expect(r.code).not.toBe(0);
    // Real kubectl 1.33 (the first with https:// proxies for streaming) refuses the same proxy for the same reason
    // (at its first request, the pod's GET: the proxy's TLS is the same for every request).
    const k = await runKubectl('1.33', ['--kubeconfig', kubeconfig, 'exec', 'probe-target', '--', 'echo', 'hi'], {});
    expect(k.code).not.toBe(0);
    expect(k.stderr).toMatch(
      /proxyconnect tcp: tls: failed to verify certificate: x509: cannot validate certificate for 127\.0\.0\.1 because it doesn't contain any IP SANs/,
    );
  });
});

describe('run --publish', () => {
  it('emf: Embedded Metric Format lines on stderr, stdout stays one JSON document', async () => {
    const lab = await startEmulatorWithKubeconfig({});
    try {
      const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '-o', 'json', '--no-preflight', '--publish', 'emf', '--location', 'laptop']);
      expect(r.code).toBe(0);
      JSON.parse(r.stdout);
      const emf = r.stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(emf.every((d) => d._aws.CloudWatchMetrics[0].Namespace === 'KubeStreamProbe' && d.Location === 'laptop')).toBe(true);
      expect(emf.flatMap((d) => (d.UpgradeSuccess === undefined ? [] : [d.UpgradeSuccess]))).toEqual([1, 1, 1, 1]);
    } finally {
      await lab.stop();
    }
  });

  it('cloudwatch: PutMetricData through the standard SDK chain (a local endpoint here)', async () => {
    const { startLocalAws } = await import('../helpers/local-aws.js');
    const aws = await startLocalAws();
    const lab = await startEmulatorWithKubeconfig({});
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: aws.url,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
      AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
    });
    try {
      const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--no-preflight', '--publish', 'cloudwatch']);
      expect(r.stderr).toMatch(/published \d+ metrics to CloudWatch/);
      expect(aws.puts.flatMap((p) => p.metricData).filter((d) => d.MetricName === 'UpgradeSuccess')).toHaveLength(4);
    } finally {
      process.env = saved;
      await lab.stop();
      await aws.close();
    }
  });
});
