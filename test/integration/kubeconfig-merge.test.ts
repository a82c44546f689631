/**
 * KUBECONFIG lists are merged as kubectl merges them, checked against real
 * kubectl (`kubectl config view --minify --flatten --raw` on the same files):
 * the first file to define a name wins it whole, current-context comes from
 * the first file that sets it, relative paths resolve against their own
 * file, missing files are skipped. Then a probe run whose cluster and user
 * are in different files, and in-cluster service-account auth.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runKubectl } from '../../lab/kubectl.js';
import { selfSignedCertificate } from '../../lab/emulator/tls.js';
import { connectionFor } from '../../src/kube/credentials.js';
import { inClusterContext, loadKubeconfigFor } from '../../src/kube/kubeconfig.js';
import { SecretRedactor } from '../../src/kube/secrets.js';
import { runPlan } from '../../src/probe/runner.js';
import { cli } from '../helpers/cli.js';

let dir: string;
let lab: EmulatorWithKubeconfig;
const TOKEN = 'merge-test-token-0123456789';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ksp-kubeconfig-merge-'));
  lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
});
afterAll(async () => {
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, doc: unknown) => {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, YAML.stringify(doc));
  return path;
};
const cluster = (name: string, server: string, extra: object = {}) => ({ name, cluster: { server, ...extra } });
const user = (name: string, token: string) => ({ name, user: { token } });
const context = (name: string, c: string, u: string, namespace: string) => ({ name, context: { cluster: c, user: u, namespace } });

describe('KUBECONFIG=a:b:c, as kubectl merges it', () => {
  it('first definition of a name wins whole, current-context from the first file that sets it, relative CA paths against their own file, missing files skipped: the same as kubectl config view', async () => {
    mkdirSync(join(dir, 'b'), { recursive: true });
    // A real certificate: a CA that is not one is refused when the kubeconfig is read, as kubectl refuses it.
    writeFileSync(join(dir, 'b', 'ca.pem'), selfSignedCertificate(['DNS:merge-test-ca'], 'merge-test-ca').certPem);
    const a = write('a.yaml', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster('c1', 'https://10.0.0.1:6443')],
      users: [user('u1', 'token-from-a')],
      contexts: [context('one', 'c1', 'u1', 'ns-a')],
    });
    const b = write('b/b.yaml', {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'two',
      clusters: [cluster('c2', 'https://10.0.0.2:6443', { 'certificate-authority': 'ca.pem' }), cluster('c1', 'https://10.9.9.9:6443')],
      users: [user('u2', 'token-from-b'), user('u1', 'token-from-b-for-u1')],
      contexts: [context('two', 'c2', 'u1', 'ns-b'), context('one', 'c2', 'u2', 'ns-b')],
    });
    const c = write('c.yaml', {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'one',
      clusters: [cluster('c2', 'https://10.0.0.3:6443')],
      users: [],
      contexts: [],
    });
    const list = [a, join(dir, 'missing.yaml'), b, c].join(':');

    const kubectl = await runKubectl('1.33', ['config', 'view', '--minify', '--flatten', '--raw', '-o', 'json'], { env: { KUBECONFIG: list } });
    expect(kubectl.code, kubectl.stderr).toBe(0);
    const k = JSON.parse(kubectl.stdout);
    const ours = loadKubeconfigFor(undefined, { KUBECONFIG: list });
    expect(ours.contextName).toBe(k['current-context']);
    expect(ours.contextName).toBe('two'); // b sets it first; c's "one" comes later
    expect(ours.cluster.server.toString().replace(/\/$/, '')).toBe(k.clusters[0].cluster.server);
    expect(ours.cluster.server.host).toBe('10.0.0.2:6443'); // b's c2, not c's
    expect(ours.cluster.caPem).toBe(Buffer.from(k.clusters[0].cluster['certificate-authority-data'], 'base64').toString());
    expect(ours.user.token).toBe(k.users[0].user.token);
    expect(ours.user.token).toBe('token-from-a'); // u1 from a, whole
    expect(ours.namespace).toBe(k.contexts[0].context.namespace);

    // --context picks another context from the merged set, as kubectl's does.
    const k2 = JSON.parse(
      (await runKubectl('1.33', ['config', 'view', '--minify', '--flatten', '--raw', '-o', 'json', '--context', 'one'], { env: { KUBECONFIG: list } })).stdout,
    );
    const ours2 = loadKubeconfigFor(undefined, { KUBECONFIG: list }, { context: 'one' });
    expect([ours2.cluster.server.host, ours2.namespace, ours2.user.token]).toEqual([
      new URL(k2.clusters[0].cluster.server).host,
      k2.contexts[0].context.namespace,
      k2.users[0].user.token,
    ]);
    expect([ours2.cluster.server.host, ours2.namespace]).toEqual(['10.0.0.1:6443', 'ns-a']);
  });

  it('a probe run with the cluster in one file and the user in another', async () => {
    const doc = YAML.parse(readFileSync(lab.kubeconfig, 'utf8'));
    const f1 = write('run/cluster.yaml', { ...doc, users: [] });
    const f2 = write('run/user.yaml', { apiVersion: 'v1', kind: 'Config', users: doc.users });
    const r = await cli(['run', '-o', 'json'], { KUBECONFIG: `${f1}:${f2}` });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.verdicts.every((v: { verdict: string }) => v.verdict === 'clean')).toBe(true);
  });

  it('a missing --kubeconfig is an error (kubectl: the explicit file must exist); nothing found anywhere says where it looked', () => {
    expect(() => loadKubeconfigFor(join(dir, 'nope.yaml'), {})).toThrow(/kubeconfig .*nope\.yaml cannot be read \(ENOENT\)/);
    expect(() => loadKubeconfigFor(undefined, { KUBECONFIG: join(dir, 'nope.yaml') })).toThrow(/no kubeconfig found \(.*nope\.yaml\) and not in a pod/);
  });
});

describe('in a pod: the service account', () => {
  it('with no kubeconfig anywhere, KUBERNETES_SERVICE_HOST/PORT, the mounted CA, token and namespace are used, and the run works', async () => {
    const sa = join(dir, 'serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), `${TOKEN}\n`);
    writeFileSync(join(sa, 'ca.crt'), lab.emulator.tls!.caPem);
    writeFileSync(join(sa, 'namespace'), lab.emulator.namespace);
    const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(lab.emulator.url.port), HOME: join(dir, 'no-home') };
    const ctx = loadKubeconfigFor(undefined, env, { serviceAccountDir: sa });
    expect(ctx).toMatchObject({ contextName: 'in-cluster', namespace: lab.emulator.namespace, user: { tokenFile: join(sa, 'token') } });
    expect(ctx.cluster.server.toString()).toBe(`https://127.0.0.1:${lab.emulator.url.port}/`);
    // A kubeconfig, when there is one, wins (kubectl's order).
    expect(loadKubeconfigFor(undefined, { ...env, KUBECONFIG: lab.kubeconfig }, { serviceAccountDir: sa }).contextName).not.toBe('in-cluster');
    expect(inClusterContext({ KUBERNETES_SERVICE_HOST: '127.0.0.1' }, undefined, sa)).toBeUndefined();
    const connection = await connectionFor(ctx, { env: {}, redactor: new SecretRedactor() });
    const report = await runPlan({
      location: 'pod',
      cluster: { name: 'in-cluster', connection, namespace: ctx.namespace, port: 8080 },
      operations: ['exec'],
      transports: ['websocket', 'spdy'],
      keepalives: ['kubectl'],
      holdsSeconds: [0],
    });
    expect(report.verdicts.map((v) => v.verdict)).toEqual(['clean']);
  });
});
