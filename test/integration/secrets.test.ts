/**
 * Secrets (bearer token, client key, exec-plugin token, proxy password) never
 * appear in stdout, stderr, JSON output or error messages, on success and on
 * failure paths, including a hop that reflects the request headers (and so
 * the token) into its error page.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { cli, type CliRun } from '../helpers/cli.js';
import { writePlainKubeconfig } from '../helpers/plain-kubeconfig.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';

const TOKEN = 'kspSECRETtoken-9f8e7d6c5b4a';
const PLUGIN_TOKEN = 'kspPLUGINtoken-0a1b2c3d4e5f';
const dir = mkdtempSync(join(tmpdir(), 'ksp-secrets-'));
let lab: EmulatorWithKubeconfig;
let certLab: EmulatorWithKubeconfig;
let reflector: net.Server;
let reflectorPort: number;

function assertClean(r: CliRun, secrets: readonly string[]) {
  for (const s of secrets) {
    expect(r.stdout, 'stdout').not.toContain(s);
    expect(r.stderr, 'stderr').not.toContain(s);
    // base64 of a secret is as bad as the secret
    expect(r.stdout).not.toContain(Buffer.from(s).toString('base64'));
  }
}

function config(e: EmulatorWithKubeconfig, mutate: (d: any) => void): string {
  const d = YAML.parse(emulatorKubeconfig(e.emulator));
  mutate(d);
  const p = join(dir, `kc-${Math.random().toString(36).slice(2)}`);
  writeFileSync(p, YAML.stringify(d));
  return p;
}

beforeAll(async () => {
  lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
  certLab = await startEmulatorWithKubeconfig({ tls: true, clientCertAuth: true });
  // An HTTPS "hop" that answers every upgrade with an error page quoting the request headers.
  reflector = (await import('node:https')).createServer({ cert: lab.emulator.tls!.certPem, key: lab.emulator.tls!.keyPem }, (req, res) => {
    res.writeHead(502, { 'Content-Type': 'text/html' });
    res.end(`<html><body>Bad gateway. Your request: ${JSON.stringify(req.headers)}</body></html>`);
  });
  reflector.on('upgrade', (req, socket) => {
    const body = `<html><body>Upgrade refused. Your request: ${JSON.stringify(req.headers)}</body></html>`;
    socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
  await new Promise<void>((r) => reflector.listen(0, '127.0.0.1', r));
  reflectorPort = (reflector.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await lab.stop();
  await certLab.stop();
  reflector.close();
});

describe('secrets never reach output', () => {
  for (const output of ['table', 'json']) {
    it(`bearer token, success path (-o ${output})`, async () => {
      const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--hold', '0s', '-o', output]);
      expect(r.code).toBe(0);
      assertClean(r, [TOKEN]);
    });

    it(`bearer token, reflected by a hop into its error page (-o ${output})`, async () => {
      const path = config(lab, (d) => (d.clusters[0].cluster.server = `https://127.0.0.1:${reflectorPort}`));
      const r = await cli(['run', '--kubeconfig', path, '--hold', '0s', '-o', output]);
      expect(r.code).toBe(1);
      // The reflection really happened (the JSON keeps 200 bytes of the body) and was caught.
      if (output === 'json') expect(r.stdout).toContain('[REDACTED]');
      assertClean(r, [TOKEN]);
    });
  }

  it('wrong token: the failure output does not contain the token we sent', async () => {
    const wrong = 'kspWRONGtoken-1234567890';
    const r = await cli(['run', '--kubeconfig', config(lab, (d) => (d.users[0].user.token = wrong)), '--hold', '0s', '-o', 'json']);
    expect(r.code).toBe(3); // not measured: the credentials were rejected
    expect(JSON.parse(r.stdout).verdicts[0].diagnosis[0].code).toBe('credentials-rejected');
    assertClean(r, [wrong, TOKEN]);
  });

  it('exec-plugin token, success and a plugin that prints its token to stderr and fails', async () => {
    const ok = join(dir, 'ok.sh');
    writeFileSync(ok, `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'\n`);
    const bad = join(dir, 'bad.sh');
    writeFileSync(bad, `#!/bin/sh\necho "debug: token=${PLUGIN_TOKEN} Bearer ${PLUGIN_TOKEN}" >&2\nexit 1\n`);
    chmodSync(ok, 0o755);
    chmodSync(bad, 0o755);
    const good = await cli([
      'run',
      '--kubeconfig',
      config(lab, (d) => (d.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: ok } })),
      '--hold',
      '0s',
      '-o',
      'json',
    ]);
    expect(good.code).toBe(0);
    assertClean(good, [TOKEN]);
    const failed = await cli([
      'run',
      '--kubeconfig',
      config(lab, (d) => (d.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: bad } })),
      '--hold',
      '0s',
    ]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain('failed with exit code 1');
    // Neither form of the token the failing plugin printed (it was never registered: the plugin failed).
    assertClean(failed, [PLUGIN_TOKEN]);
    expect(failed.stderr).toMatch(/token=\[REDACTED\] Bearer \[REDACTED\]/);
  });

  it('client key, success path', async () => {
    const key = certLab.emulator.tls!.clientKeyPem;
    const path = config(certLab, (d) => {
      d.users[0].user = {
        'client-certificate-data': Buffer.from(certLab.emulator.tls!.clientCertPem).toString('base64'),
        'client-key-data': Buffer.from(key).toString('base64'),
      };
    });
    const r = await cli(['run', '--kubeconfig', path, '--hold', '0s', '-o', 'json']);
    expect(r.code).toBe(0);
    const keyBody = key.split('\n').filter((l) => !l.startsWith('-----') && l.length > 20);
    assertClean(r, keyBody);
  });

  it('proxy password in proxy-url, on the failure path (proxy unreachable)', async () => {
    const password = 'kspPROXYpass-31415926';
    const r = await cli([
      'run',
      '--kubeconfig',
      config(lab, (d) => (d.clusters[0].cluster['proxy-url'] = `http://probe:${password}@127.0.0.1:1`)),
      '--hold',
      '0s',
      '-o',
      'json',
    ]);
    // Nothing answers at the proxy's address: unreachable, exit 3 (as audit).
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).verdicts.every((v: { verdict: string }) => v.verdict === 'unreachable')).toBe(true);
    assertClean(r, [password, TOKEN]);
  });
});

describe('a hop that reflects the request headers in its refusal', () => {
  it('our token, sent as Authorization, comes back in the body without its scheme and is still redacted (the registered secret, not a pattern)', async () => {
    const { rawServer } = await import('../helpers/raw-server.js');
    const { runPlan } = await import('../../src/probe/runner.js');
    const token = 'kspREFLECTEDtoken-9f8e7d6c5b';
    // A debugging WAF page: it quotes the credential it saw, with no "Bearer", no "token=": only the registry can know it.
    const raw = await rawServer((socket, req) => {
      const seen = (req.header('authorization') ?? '').split(' ')[1] ?? '';
      const body = `<html><title>Blocked</title><p>request from credential ${seen} blocked</p></html>`;
      socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
    try {
      const report = await runPlan(
        {
          location: 'test',
          cluster: {
            name: 'reflect',
            connection: { server: raw.url, headers: { Authorization: `Bearer ${token}` }, upgradeTimeoutMs: 2000 },
            namespace: 'default',
            pod: 'p',
            port: 8080,
          },
          operations: ['exec'],
          transports: ['websocket', 'spdy'],
          keepalives: ['kubectl'],
          holdsSeconds: [0],
          echoTimeoutMs: 2000,
        },
        { skipPreflight: true },
      );
      const text = JSON.stringify(report);
      expect(text).toContain('credential [REDACTED] blocked');
      expect(text).not.toContain(token);
    } finally {
      await raw.close();
    }
  });
});

describe('a hostile peer that places our token where its text is clipped (issue 57 §5)', () => {
  it('no run of 12 characters of the token in table, JSON, HTML or -v output, wherever the cut falls', async () => {
    const { rawServer } = await import('../helpers/raw-server.js');
    const token = 'hostile-secret-token-4f9b2c';
    // The Server header is kept to 80 characters, Via to 120 and a refusal's body to 120: the token straddles each cut,
    // and a header is named after it (Node lower-cases header names, the case-sensitive match missed it).
    const raw = await rawServer((socket) => {
      const body = `${'b'.repeat(110)}${token}`;
      socket.end(
        [
          'HTTP/1.1 403 Forbidden',
          `Server: ${'s'.repeat(70)}${token}`,
          `Via: 1.1 ${'v'.repeat(104)}${token}`,
          `${token.toUpperCase()}-Xyz: 1`,
          'Content-Type: text/plain',
          `Content-Length: ${body.length}`,
          'Connection: close',
          '',
          body,
        ].join('\r\n'),
      );
    });
    try {
      const kc = writePlainKubeconfig(join(dir, 'hostile-kubeconfig'), raw.url.toString(), { token });
      const pieces = Array.from({ length: token.length - 11 }, (_, i) => token.slice(i, i + 12).toLowerCase());
      for (const output of ['table', 'json', 'html']) {
        const r = await cli(['run', '--kubeconfig', kc, '--pod', 'p', '--hold', '0s', '--keepalive', 'kubectl', '-o', output, '-v']);
        const text = `${r.stdout}\n${r.stderr}`.toLowerCase();
        expect(text.length).toBeGreaterThan(100);
        for (const p of pieces) expect(text, `${output}: ${p}`).not.toContain(p);
      }
    } finally {
      await raw.close();
    }
  });
});

describe('a peer that writes terminal escapes into its refusal (issue 57 §6)', () => {
  it('table and -v output show them as \\xHH: no raw control byte reaches the terminal; JSON keeps the text escaped', async () => {
    const { rawServer } = await import('../helpers/raw-server.js');
    // Clear the screen, home the cursor, retitle the window, and paint a forged clean row in green (C0), plus a C1 CSI.
    const evil = '\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[32mexec kubectl 0s ok ok clean\x1b[0m \u009b2J';
    const raw = await rawServer((socket) => {
      const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: evil, reason: 'BadRequest', code: 400 });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    try {
      const kc = writePlainKubeconfig(join(dir, 'escapes-kubeconfig'), raw.url.toString(), {});
      const table = await cli(['run', '--kubeconfig', kc, '--pod', 'p', '--hold', '0s', '--keepalive', 'kubectl', '-v']);
      const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
      expect(table.stdout).not.toMatch(controls);
      expect(table.stderr).not.toMatch(controls);
      expect(table.stdout).toContain('\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07');
      const json = await cli(['run', '--kubeconfig', kc, '--pod', 'p', '--hold', '0s', '--keepalive', 'kubectl', '-o', 'json']);
      expect(JSON.stringify(JSON.parse(json.stdout))).toContain('\\u001b[2J');
    } finally {
      await raw.close();
    }
  });
});
