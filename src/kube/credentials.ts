/**
 * Turns a kubeconfig context into what a connection needs: TLS settings, the
 * Authorization header and the proxy. Exec credential plugins
 * (client.authentication.k8s.io v1 and v1beta1, e.g. `aws eks get-token`)
 * are run as kubectl runs them. Every secret is registered with the redactor.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { probeError } from '../errors.js';
import type { ConnectionConfig } from '../net/connection.js';
import type { ExecPluginConfig, ResolvedContext } from './kubeconfig.js';
import { userAgent } from '../version.js';
import { clientPairProblem } from './pem-check.js';
import { chooseProxy } from './proxy.js';
import type { SecretRedactor } from './secrets.js';

export interface CredentialOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly redactor: SecretRedactor;
  /** Exec plugin time limit, ms. */
  readonly pluginTimeoutMs?: number;
}

interface ExecCredentialStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  readonly expirationTimestamp?: string;
}

const PLUGIN_OUTPUT_LIMIT = 1024 * 1024;

export async function runExecPlugin(plugin: ExecPluginConfig, ctx: ResolvedContext, opts: CredentialOptions): Promise<ExecCredentialStatus> {
  const execInfo = {
    apiVersion: plugin.apiVersion,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      ...(plugin.provideClusterInfo
        ? { cluster: { server: ctx.cluster.server.toString().replace(/\/$/, ''), 'insecure-skip-tls-verify': ctx.cluster.insecureSkipTlsVerify } }
        : {}),
    },
  };
  const env: NodeJS.ProcessEnv = { ...opts.env, KUBERNETES_EXEC_INFO: JSON.stringify(execInfo) };
  for (const e of plugin.env) env[e.name] = e.value;
  const name = `exec plugin "${plugin.command}"`;
  const { code, stdout, stderr, error } = await new Promise<{ code: number | null; stdout: string; stderr: string; error?: Error }>((resolve) => {
    let stdout = '';
    let stderr = '';
    let child;
    try {
      child = spawn(plugin.command, [...plugin.args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      resolve({ code: null, stdout, stderr, error: err as Error });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.pluginTimeoutMs ?? 30_000);
    child.stdout.on('data', (c: Buffer) => {
      if (stdout.length < PLUGIN_OUTPUT_LIMIT) stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString('utf8');
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr, error: err });
    });
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve({ code: c, stdout, stderr });
    });
  });
  if (error) {
    const hint = plugin.installHint ? ` ${plugin.installHint.trim().split('\n')[0]}` : '';
    throw probeError('CREDENTIAL_PLUGIN', `${name} could not be started (${(error as NodeJS.ErrnoException).code ?? error.message}).${hint}`, {
      field: 'users.user.exec.command',
    });
  }
  if (code !== 0) {
    const last = stderr.trim().split('\n').pop()?.slice(0, 200) ?? '';
    throw probeError('CREDENTIAL_PLUGIN', `${name} failed with exit code ${code}${last ? `: ${opts.redactor.redact(last)}` : ''}`, {
      field: 'users.user.exec',
    });
  }
  let cred: { apiVersion?: string; kind?: string; status?: ExecCredentialStatus };
  try {
    cred = JSON.parse(stdout) as typeof cred;
  } catch {
    throw probeError('CREDENTIAL_PLUGIN', `${name} printed something that is not ExecCredential JSON`, { field: 'users.user.exec' });
  }
  if (cred?.kind !== 'ExecCredential' || cred.apiVersion !== plugin.apiVersion) {
    throw probeError(
      'CREDENTIAL_PLUGIN',
      `${name} printed kind "${String(cred?.kind)}" apiVersion "${String(cred?.apiVersion)}", expected ExecCredential ${plugin.apiVersion}`,
      { field: 'users.user.exec' },
    );
  }
  const status = cred.status ?? {};
  if (!status.token && !(status.clientCertificateData && status.clientKeyData)) {
    throw probeError('CREDENTIAL_PLUGIN', `${name} returned neither status.token nor a client certificate and key`, { field: 'users.user.exec' });
  }
  opts.redactor.add(status.token);
  opts.redactor.add(status.clientKeyData);
  const pair = status.clientCertificateData && status.clientKeyData ? clientPairProblem(status.clientCertificateData, status.clientKeyData) : undefined;
  if (pair) {
    const field = pair.which === 'certificate' ? 'status.clientCertificateData' : 'status.clientKeyData';
    throw probeError('CREDENTIAL_PLUGIN', `${name} returned a ${field} that ${pair.rule}`, { field: 'users.user.exec' });
  }
  return status;
}

/** Everything a connection to this context's API server needs, credentials included. */
export async function connectionFor(ctx: ResolvedContext, opts: CredentialOptions): Promise<ConnectionConfig> {
  const u = ctx.user;
  const headers: Record<string, string> = {};
  let cert = u.clientCertPem;
  let key = u.clientKeyPem;
  let token = u.token;
  if (!token && u.tokenFile) {
    try {
      token = readFileSync(u.tokenFile, 'utf8').trim();
    } catch (err) {
      throw probeError(
        'KUBECONFIG_UNREADABLE',
        `${ctx.source}: users[${u.name}].user.tokenFile ${u.tokenFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        { file: u.tokenFile },
      );
    }
  }
  if (!token && !cert && u.exec) {
    const status = await runExecPlugin(u.exec, ctx, opts);
    token = status.token;
    if (status.clientCertificateData && status.clientKeyData) {
      cert = status.clientCertificateData;
      key = status.clientKeyData;
    }
  }
  opts.redactor.add(token);
  opts.redactor.add(key);
  opts.redactor.add(u.password);
  // kubectl never sends credentials to an http:// server (seen live); neither do we.
  const plaintext = ctx.cluster.server.protocol === 'http:';
  if (plaintext) {
    /* no Authorization */
  } else if (token) headers.Authorization = `Bearer ${token}`;
  else if (u.username && u.password) headers.Authorization = `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}`;
  if (headers.Authorization) opts.redactor.add(headers.Authorization.split(' ')[1]);
  const proxy = chooseProxy(ctx.cluster.server, ctx.cluster.proxyUrl, opts.env);
  if (proxy?.password) opts.redactor.add(decodeURIComponent(proxy.password));
  return {
    server: ctx.cluster.server,
    tls: {
      ca: ctx.cluster.caPem ? [ctx.cluster.caPem] : undefined,
      cert,
      key,
      insecureSkipVerify: ctx.cluster.insecureSkipTlsVerify,
      serverName: ctx.cluster.tlsServerName,
    },
    // Go verifies an https:// proxy with the same TLS config as the cluster (its CA, its skip-verify).
    proxy: proxy
      ? { url: proxy, tls: { ca: ctx.cluster.caPem ? [ctx.cluster.caPem] : undefined, insecureSkipVerify: ctx.cluster.insecureSkipTlsVerify } }
      : undefined,
    headers,
    userAgent: userAgent(),
  };
}
