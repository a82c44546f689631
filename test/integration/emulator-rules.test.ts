/**
 * The emulator refuses what kube-apiserver and the kubelet refuse, with their status and words
 * (lab/emulator/stream-rules.ts names the source of each rule). Raw requests on loopback, so every byte of the reply
 * is seen; and real kubectl 1.33 for what a user reads of them.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmulatorOptions } from '../../lab/emulator/options.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { runKubectl } from '../../lab/kubectl.js';
import { openExec } from '../../src/streaming/index.js';

let lab: EmulatorWithKubeconfig | undefined;
afterEach(async () => {
  await lab?.stop();
  lab = undefined;
});
async function start(o: EmulatorOptions = {}) {
  lab = await startEmulatorWithKubeconfig(o);
  return lab;
}

const POD = '/api/v1/namespaces/default/pods/probe-target';
const SPDY = { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io' };
const ws = (protocols?: string) => ({
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  ...(protocols === undefined ? {} : { 'Sec-WebSocket-Protocol': protocols }),
});

/** Sends one request and reads the reply until the server closes (or, for a 101, its head). */
function raw(url: URL, method: string, target: string, headers: Record<string, string>): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(url.port), url.hostname);
    let buf = Buffer.alloc(0);
    const done = () => {
      const text = buf.toString('latin1');
      const i = text.indexOf('\r\n\r\n');
      const head = i < 0 ? text : text.slice(0, i);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: i < 0 ? '' : text.slice(i + 4) });
      s.destroy();
    };
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (/^HTTP\/1\.1 101/.test(buf.toString('latin1')) && buf.includes('\r\n\r\n')) done();
    });
    s.on('end', done);
    s.on('error', reject);
    s.setTimeout(5000, () => reject(new Error('no reply')));
    s.write(
      `${method} ${target} HTTP/1.1\r\nHost: ${url.host}\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`,
    );
  });
}
const status = (body: string) => JSON.parse(body) as { kind: string; code: number; reason: string; message: string; details?: object };

describe('the container (strategy.go validateContainer): the target has three, as the manifest deploys it', () => {
  for (const [sub, method, headers] of [
    ['exec?command=cat&stdin=true&stdout=true', 'POST', SPDY],
    ['exec?command=cat&stdin=true&stdout=true', 'GET', ws('v5.channel.k8s.io')],
    ['attach?stdin=true&stdout=true', 'POST', SPDY],
    ['attach?stdin=true&stdout=true', 'GET', ws('v5.channel.k8s.io')],
  ] as const) {
    it(`${method} ${sub.split('?')[0]} without container=: 400, the pod's containers listed`, async () => {
      const l = await start();
      const r = await raw(l.emulator.url, method, `${POD}/${sub}`, headers);
      expect(r.status).toBe(400);
      expect(status(r.body)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'a container name must be specified for pod probe-target, choose one of: [main echo tty]',
        reason: 'BadRequest',
        code: 400,
      });
    });
  }

  it('a container the pod does not have: 400 "container X is not valid for pod Y"; port-forward names none', async () => {
    const l = await start();
    const r = await raw(l.emulator.url, 'POST', `${POD}/exec?command=cat&container=nope&stdout=true`, SPDY);
    expect([r.status, status(r.body).message]).toEqual([400, 'container nope is not valid for pod probe-target']);
    const pf = await raw(l.emulator.url, 'POST', `${POD}/portforward`, { ...SPDY, 'X-Stream-Protocol-Version': 'portforward.k8s.io' });
    expect(pf.status).toBe(101);
  });

  it('real kubectl names the container itself: the annotation, else the first with "Defaulted container"', async () => {
    const l = await start({ defaultContainerAnnotation: false });
    const r = await runKubectl('1.33', ['--kubeconfig', l.kubeconfig, 'exec', 'probe-target', '--', 'echo', 'hi']);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'hi\n', 'Defaulted container "main" out of: main, echo, tty\n']);
    expect(new URLSearchParams(l.emulator.upgrades.at(-1)!.query).get('container')).toBe('main');
  });
});

describe('the pod (getPod, streamLocation, PortForwardLocation)', () => {
  it('a pod that does not exist: 404 with its details', async () => {
    const l = await start();
    const r = await raw(l.emulator.url, 'POST', '/api/v1/namespaces/default/pods/nope/exec?command=cat&container=main&stdout=true', SPDY);
    expect(r.status).toBe(404);
    expect(status(r.body)).toMatchObject({ message: 'pods "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'pods' } });
  });

  it('a pod not scheduled: 400 "does not have a host assigned" for exec, attach and port-forward; kubectl prints it', async () => {
    const l = await start({ targetState: 'unscheduled' });
    for (const sub of ['exec?command=cat&container=main&stdout=true', 'attach?container=main&stdout=true', 'portforward']) {
      const r = await raw(l.emulator.url, 'POST', `${POD}/${sub}`, SPDY);
      expect([r.status, status(r.body).message]).toEqual([400, 'pod probe-target does not have a host assigned']);
    }
    const k = await runKubectl('1.33', ['--kubeconfig', l.kubeconfig, 'exec', 'probe-target', '--', 'true']);
    expect([k.code, k.stderr]).toEqual([1, 'Error from server (BadRequest): pod probe-target does not have a host assigned\n']);
  });

  it('containers not started: the kubelet\'s 500 "container not found" as plain text; behind the v5 translator, after the 101', async () => {
    const l = await start({ targetState: 'not-started' });
    const r = await raw(l.emulator.url, 'POST', `${POD}/exec?command=cat&container=main&stdout=true`, SPDY);
    expect(r.status).toBe(500);
    expect(r.head).toMatch(/Content-Type: text\/plain; charset=utf-8/);
    expect(r.body).toBe('container not found ("main")');
    const v5 = await openExec('websocket', { server: l.emulator.url }, { namespace: 'default', pod: 'probe-target', container: 'main', command: ['true'] });
    expect(await v5.exit).toMatchObject({
      status: { code: 500, reason: 'InternalError', message: 'Internal error occurred: unable to upgrade connection: container not found ("main")' },
    });
    v5.close();
    const spdy = await runKubectl('1.33', ['--kubeconfig', l.kubeconfig, 'exec', 'probe-target', '--', 'true'], {
      env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' },
    });
    expect(spdy.stderr).toBe('error: unable to upgrade connection: container not found ("main")\n');
    const wsKubectl = await runKubectl('1.33', ['--kubeconfig', l.kubeconfig, 'exec', 'probe-target', '--', 'true']);
    expect(wsKubectl.stderr).toBe('error: Internal error occurred: unable to upgrade connection: container not found ("main")\n');
  });
});

describe('the kubelet (remotecommand NewOptions, portforward NewV4Options)', () => {
  it('exec and attach with none of stdin, stdout, stderr: 400 plain text', async () => {
    const l = await start();
    for (const sub of ['exec?command=cat&container=main', 'attach?container=main&tty=true']) {
      const r = await raw(l.emulator.url, 'POST', `${POD}/${sub}`, SPDY);
      expect([r.status, r.body]).toEqual([400, 'you must specify at least 1 of stdin, stdout, stderr']);
    }
  });

  it("a WebSocket port-forward on the kubelet's own protocol: the ports query required, not empty, each > 0", async () => {
    const l = await start();
    const pf = (q: string) => raw(l.emulator.url, 'GET', `${POD}/portforward${q}`, ws('v4.channel.k8s.io'));
    expect((await pf('')).body).toBe('query parameter "ports" is required');
    expect((await pf('?ports=')).body).toBe('query parameter "ports" cannot be empty');
    expect((await pf('?ports=0')).body).toBe('port "0" must be > 0');
    expect((await pf('?ports=http')).body).toBe('unable to parse "http" as a port: strconv.ParseUint: parsing "http": invalid syntax');
    expect((await pf('?ports=8080')).status).toBe(101);
    // The API server's tunnel reads the port from each stream: no query needed.
    expect((await raw(l.emulator.url, 'GET', `${POD}/portforward`, ws('SPDY/3.1+portforward.k8s.io'))).status).toBe(101);
  });
});

describe('authorization (the filter, then the 1.35 create check)', () => {
  it('the filter names the user and the verb; the 1.35 check on a GET upgrade names neither', async () => {
    const l = await start({ rbac: { model: '1.35', verbs: ['get'] } });
    const spdy = await raw(l.emulator.url, 'POST', `${POD}/exec?command=cat&container=main&stdout=true`, SPDY);
    expect([spdy.status, status(spdy.body).message]).toEqual([
      403,
      'pods "probe-target" is forbidden: User "lab-user" cannot create resource "pods/exec" in API group "" in the namespace "default"',
    ]);
    const get = await raw(l.emulator.url, 'GET', `${POD}/exec?command=cat&container=main&stdout=true`, ws('v5.channel.k8s.io'));
    expect(status(get.body)).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'pods "probe-target" is forbidden: ',
      details: { name: 'probe-target', kind: 'pods' },
    });
  });

  it('authorization comes before the pod lookup: a missing pod without RBAC is 403, not 404', async () => {
    const l = await start({ rbac: { model: 'pre-1.35', verbs: [] } });
    const r = await raw(l.emulator.url, 'POST', '/api/v1/namespaces/default/pods/nope/exec?command=cat&stdout=true', SPDY);
    expect(r.status).toBe(403);
  });
});

describe('the subprotocols (the translator, the tunnel, the kubelet; httpstream.Handshake)', () => {
  it('WebSocket: v5 anywhere in the offer is the translator; the kubelet takes its own in the client order; none served is a bare 403', async () => {
    const l = await start();
    const exec = (p?: string) => raw(l.emulator.url, 'GET', `${POD}/exec?command=cat&container=main&stdout=true`, ws(p));
    expect((await exec('v4.channel.k8s.io, v5.channel.k8s.io')).head).toMatch(/Sec-WebSocket-Protocol: v5\.channel\.k8s\.io/);
    expect((await exec('base64.channel.k8s.io, v4.channel.k8s.io')).head).toMatch(/Sec-WebSocket-Protocol: base64\.channel\.k8s\.io/);
    const none = await exec(undefined);
    expect(none.status).toBe(101);
    expect(none.head).not.toMatch(/Sec-WebSocket-Protocol/);
    const refused = await exec('v6.channel.k8s.io');
    expect([refused.status, refused.head, refused.body]).toEqual([403, 'HTTP/1.1 403 Forbidden', '']);
  });

  it('SPDY: no X-Stream-Protocol-Version gets an empty 200; none supported a plain-text 403 listing the accepted ones', async () => {
    const l = await start();
    const target = `${POD}/exec?command=cat&container=main&stdout=true`;
    const empty = await raw(l.emulator.url, 'POST', target, { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' });
    expect([empty.status, empty.body]).toEqual([200, '']);
    const refused = await raw(l.emulator.url, 'POST', target, { ...SPDY, 'X-Stream-Protocol-Version': 'v5.channel.k8s.io' });
    expect(refused.status).toBe(403);
    expect(refused.head.match(/X-Accepted-Stream-Protocol-Versions: .*/g)).toEqual([
      'X-Accepted-Stream-Protocol-Versions: v4.channel.k8s.io',
      'X-Accepted-Stream-Protocol-Versions: v3.channel.k8s.io',
      'X-Accepted-Stream-Protocol-Versions: v2.channel.k8s.io',
      'X-Accepted-Stream-Protocol-Versions: channel.k8s.io',
    ]);
    expect(refused.body).toBe(
      'unable to upgrade: unable to negotiate protocol: client supports [v5.channel.k8s.io], server accepts [v4.channel.k8s.io v3.channel.k8s.io v2.channel.k8s.io channel.k8s.io]\n',
    );
  });

  it('a streaming path without an Upgrade header: 400 "Upgrade request required" (the upgrade-aware proxy)', async () => {
    const l = await start();
    const r = await raw(l.emulator.url, 'POST', `${POD}/exec?command=cat&container=main&stdout=true`, { Connection: 'close' });
    expect([r.status, status(r.body).message]).toEqual([400, 'Upgrade request required']);
  });
});
