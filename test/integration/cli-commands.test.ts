/** The CLI surface: help everywhere, manifest contents, usage errors, no progress noise off a terminal. */
import { holdShapeCommand } from '../../src/probe/hold-shape.js';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

describe('kube-stream-probe CLI', () => {
  for (const command of ['demo', 'run', 'emulator', 'manifest']) {
    it(`${command} --help prints usage and exits 0`, async () => {
      const r = await cli([command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: kube-stream-probe ${command}`));
    });
  }

  it('no command: usage, exit 2; an unknown command: exit 2 naming it', async () => {
    expect((await cli([])).code).toBe(2);
    const r = await cli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  it('manifest: a StatefulSet target (stable pod name, survives drains), its images overridable, and least-privilege RBAC for exactly its pod', async () => {
    const r = await cli([
      'manifest',
      '-n',
      'probes',
      '--name',
      'target',
      '--port',
      '9000',
      '--service-account',
      'ops/prober',
      '--image',
      'registry.corp.example/mirror/busybox:1.36',
      '--echo-image',
      'registry.corp.example/mirror/socat:1.8',
    ]);
    expect(r.code).toBe(0);
    const docs = YAML.parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(docs.map((d) => d.kind)).toEqual(['Namespace', 'StatefulSet', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
    const sts = docs[1];
    expect(sts.metadata).toMatchObject({ name: 'target', namespace: 'probes' });
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.template.metadata.labels['app.kubernetes.io/name']).toBe('kube-stream-probe-target');
    const [main, echo, tty] = sts.spec.template.spec.containers;
    // The terminal container terminal attach sessions join (--tty): a pty, the size loop, the same image and least privilege.
    expect(tty).toMatchObject({ name: 'tty', tty: true, stdin: true, command: holdShapeCommand('tty'), image: 'registry.corp.example/mirror/busybox:1.36' });
    expect(tty.securityContext).toEqual(main.securityContext);
    expect(main).toMatchObject({ command: ['cat'], image: 'registry.corp.example/mirror/busybox:1.36' });
    expect(echo).toMatchObject({ image: 'registry.corp.example/mirror/socat:1.8', ports: [{ containerPort: 9000 }] });
    const role = docs[2];
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: [''], resources: ['pods'], resourceNames: ['target-0'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods/exec', 'pods/portforward', 'pods/attach'], resourceNames: ['target-0'], verbs: ['get', 'create'] },
    ]);
    expect(docs[3].subjects).toEqual([{ kind: 'ServiceAccount', name: 'prober', namespace: 'ops' }]);
    expect(docs[4].rules[0]).toEqual({ apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'], verbs: ['create'] });
    expect(r.stdout).not.toContain('*');
  });

  it('manifest refuses invalid names and two subjects', async () => {
    expect((await cli(['manifest', '--name', 'Not_Valid'])).code).toBe(2);
    expect((await cli(['manifest', '--image', 'has spaces:1'])).code).toBe(2);
    const r = await cli(['manifest', '--group', 'a', '--user', 'b']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('give only one of --group, --user, --service-account');
  });

  it('demo -o json prints one document per path and no progress noise when not on a terminal', async () => {
    const r = await cli(['demo', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout);
    expect(doc.map((p: { path: string }) => p.path)).toContain('direct');
  }, 60_000);
});
