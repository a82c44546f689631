/**
 * Turns results into the likely broken hop, in plain words, with the measured
 * numbers and what to check next (docs/architecture.md, "Verdicts and
 * diagnosis"; codes in docs/diagnoses.md).
 */
import net from 'node:net';
import { SPDY_PING_PERIOD_MS, TUNNEL_PING_PERIOD_MS, WS_PING_PERIOD_MS, WS_PONG_DEADLINE_MS, kubectlPingPeriodMs, seconds } from '../streaming/keepalive.js';
import { clip } from '../text.js';
import { OPERATION_WORDS, TRANSPORT_WORDS, type Transport } from '../vocabulary.js';
import type { Diagnosis, SessionResult } from './types.js';

const UPGRADE_LINE: Readonly<Record<Transport, string>> = {
  websocket: 'GET with `Connection: Upgrade` and `Upgrade: websocket`',
  spdy: 'POST with `Connection: Upgrade` and `Upgrade: SPDY/3.1`',
};
const opWords = (r: SessionResult) => OPERATION_WORDS[r.operation];
const what = (r: SessionResult) => `${TRANSPORT_WORDS[r.transport]} ${opWords(r)}`;

/** Idle timeouts that usually sit at a given duration, in seconds. */
export const KNOWN_IDLE_TIMEOUTS: ReadonlyArray<{ readonly seconds: number; readonly who: string }> = [
  { seconds: 30, who: 'a 30 s backend/idle timeout (GKE backend services, some corporate proxies)' },
  { seconds: 60, who: "nginx's default proxy_read_timeout (60 s) or an AWS ALB's default idle timeout (60 s)" },
  { seconds: 350, who: "an AWS NLB's, NAT gateway's or VPC endpoint's fixed TCP idle timeout (350 s)" },
  { seconds: 4 * 3600, who: "the kubelet's / API server's streaming idle timeout (4 h)" },
];

export function knownTimeoutNear(s: number): string | undefined {
  return KNOWN_IDLE_TIMEOUTS.find((k) => Math.abs(s - k.seconds) <= Math.max(2, k.seconds * 0.1))?.who;
}

const fmt = (s: number) => (s >= 100 ? s.toFixed(0) : s.toFixed(1));

/** The gist of a refusal body: an HTML page's title, else its first words, never cut mid-word. */
export function bodyGist(body: string): string {
  const title = /<title>([^<]{1,120})<\/title>/i.exec(body)?.[1]?.trim();
  if (title) return title;
  return clip(body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim(), 80);
}

/** The hop software a refusal names, from its Server header or its error page. */
export function hopProduct(server: string | undefined, body: string | undefined): string | undefined {
  if (server) return server;
  const b = body ?? '';
  const known: ReadonlyArray<[RegExp, string]> = [
    [/nginx/i, 'nginx'],
    [/haproxy/i, 'HAProxy'],
    [/envoy|upstream connect error|no healthy upstream/i, 'Envoy'],
    [/squid/i, 'Squid'],
    [/awselb|elastic load balanc/i, 'an AWS load balancer'],
    [/cloudflare/i, 'Cloudflare'],
    [/apache/i, 'Apache'],
  ];
  return known.find(([re]) => re.test(b))?.[1];
}

/** The session's error without the "WebSocket exec: " its message starts with (the diagnosis says it already). */
function errorText(r: SessionResult, text: string | null | undefined): string {
  const t = text ?? '';
  const prefix = `${what(r)}: `;
  return t.toLowerCase().startsWith(prefix.toLowerCase()) ? t.slice(prefix.length) : t;
}

/** A certificate kubectl would refuse too: untrusted (a TLS-intercepting proxy is one cause) or valid for other names. */
function tlsDiagnosis(r: SessionResult, t: NonNullable<SessionResult['upgrade']['tls']>, context: { readonly proxy?: string }): Diagnosis {
  const whose = t.peer === 'proxy' ? `the https:// proxy's (${context.proxy ?? 'proxy-url'})` : "the API server's";
  if (t.untrusted) {
    return {
      code: 'tls-certificate',
      summary: `For the ${what(r)}, ${whose} certificate is not trusted: it was issued by ${t.issuer ?? 'an unknown issuer'} (it holds ${t.certificateNames ?? 'no names'}), not by a certificate authority the kubeconfig trusts.`,
      check:
        t.peer === 'proxy'
          ? // kubectl verifies the proxy with the cluster's TLS config (net/http clones TLSClientConfig for an https://
            // proxy; real kubectl 1.33 accepts a lab-CA proxy and refuses a self-signed one, test/integration/cli-run),
            // and crypto/tls uses RootCAs instead of the host's roots when it is set ("If RootCAs is nil, TLS uses
            // the host's root CA set").
            `kubectl refuses this proxy too: it checks an https:// proxy against the kubeconfig's certificate-authority, and when that is set, only against it (not the system's CAs). Put ${t.issuer ?? "the proxy's CA"} in the same bundle as the cluster's CA in certificate-authority, or use an http:// proxy-url (the API server's TLS still runs end to end inside CONNECT).`
          : `kubectl refuses this certificate too. If ${t.issuer ?? 'that issuer'} is not your cluster's CA, a TLS-intercepting proxy (corporate proxy, SSL inspection, mitmproxy) is on the path: exempt the API server from inspection, or add its CA to certificate-authority. Otherwise the kubeconfig's certificate-authority is not the cluster's.`,
    };
  }
  const san = net.isIP(t.checkedName) ? `IP:${t.checkedName}` : `DNS:${t.checkedName}`;
  return {
    code: 'tls-certificate',
    summary: `For the ${what(r)}, ${whose} certificate was checked against ${t.checkedName} but is valid only for ${t.certificateNames ?? 'other names'}.`,
    check:
      t.peer === 'proxy'
        ? `kubectl checks the proxy-url's host and refuses it too: write the proxy-url with a name the proxy's certificate holds, or have the proxy's certificate reissued with ${san} in its subjectAltName (kubectl ignores the Common Name).`
        : `kubectl checks the same name and refuses it too: connect by a name the certificate holds, set tls-server-name in the kubeconfig to one of them, or reissue the certificate with ${san} in its subjectAltName (kubectl ignores the Common Name).`,
  };
}

/** A session cut during its hold: an idle timeout, one shorter than kubectl's ping interval, or a hop that ignores pings. */
function holdCut(r: SessionResult): Diagnosis | undefined {
  const h = r.hold;
  if (h.disconnectSeconds === null) return undefined;
  const sinceData = h.sinceDataSeconds ?? h.disconnectSeconds;
  const idle = h.idleSeconds ?? sinceData;
  const near = knownTimeoutNear(sinceData);
  const where = `during ${/^(8|11$|18$)/.test(String(r.holdSeconds)) ? 'an' : 'a'} ${r.holdSeconds} s hold (${h.cause})`;
  // kubectl's SPDY exec reports nothing when this happens (client-go: EOF on every stream is a clean end).
  const silentExit = r.operation === 'exec' && r.transport === 'spdy' ? " kubectl's SPDY exec exits 0 with no message when a hop cuts it like this, so scripts do not notice." : '';
  const pingSeconds = kubectlPingPeriodMs(r.operation, r.transport) / 1000;
  if (r.keepalive === 'kubectl' && (idle + 0.5 < sinceData || idle < pingSeconds)) {
    if (idle + 0.5 < sinceData) {
      // Bytes were still moving shortly before the cut: kubectl's pings flowed, and the hop cut anyway.
      return {
        code: 'pings-ignored',
        summary: `The ${what(r)} session was cut ${fmt(sinceData)} s after its last data ${where}, although kubectl's pings (every ${pingSeconds} s) had moved bytes ${fmt(idle)} s before the cut.`,
        check: `The hop counts only application data as activity and ignores keepalive frames: only its idle timeout (about ${Math.round(sinceData)} s) decides. Raise it above the longest quiet period you need.${silentExit}`,
      };
    }
    return {
      code: 'idle-timeout',
      summary: `The ${what(r)} session was cut after ${fmt(idle)} s with no byte moving ${where}: kubectl's keepalive on this session sends its first ping after ${pingSeconds} s.`,
      check: `The hop's idle timeout (about ${Math.round(idle)} s) is shorter than kubectl's ping interval (${seconds(SPDY_PING_PERIOD_MS)} on SPDY and WebSocket exec; ${seconds(TUNNEL_PING_PERIOD_MS)} in the WebSocket port-forward tunnel), so kubectl's own keepalive cannot keep it open. Raise it well above ${seconds(TUNNEL_PING_PERIOD_MS)}.${silentExit}`,
    };
  }
  return {
    code: 'idle-timeout',
    summary: `The ${what(r)} session was cut after ${fmt(idle)} s with no byte moving ${where}, ${r.keepalive === 'none' ? 'without pings' : 'with kubectl\'s keepalive'} (${fmt(h.disconnectSeconds)} s after the 101).`,
    check: `${near ? `That is ${near}.` : `A hop (load balancer, proxy, NAT) has an idle timeout of about ${Math.round(idle)} s.`} kubectl's pings (every ${seconds(WS_PING_PERIOD_MS)}; ${seconds(TUNNEL_PING_PERIOD_MS)} in the port-forward tunnel) may keep it open: compare the keepalive "kubectl" rows. Raise it for clients that send no pings.${silentExit}`,
  };
}

/** Why one failed session failed. */
export function explainFailure(r: SessionResult, context: { readonly proxy?: string; readonly serverVersion?: string | null }): Diagnosis | undefined {
  if (r.ok) return undefined;
  const u = r.upgrade;
  if (!u.ok) {
    // A refused certificate; a handshake broken by the network stays "unreachable" below.
    if (u.tls) return tlsDiagnosis(r, u.tls, context);
    const err = errorText(r, u.error);
    switch (u.errorCode) {
      case 'UPGRADE_REJECTED': {
        if (!u.kubernetesStatus) {
          const product = hopProduct(u.server, u.bodyPrefix);
          const gist = u.bodyPrefix ? `: "${bodyGist(u.bodyPrefix)}"` : '';
          return {
            code: 'hop-refused-upgrade',
            summary: `The ${what(r)} upgrade was answered with HTTP ${u.status} by ${product ? `${product}, not the API server` : 'something that is not the API server'} (the body is not a Kubernetes Status${gist}).`,
            check: `An L7 hop (proxy, ingress, load balancer, WAF) between here and the API server refuses it. It must pass the ${UPGRADE_LINE[r.transport]} and answer 101.${context.proxy ? ` A forward proxy is configured: ${context.proxy}.` : ''}`,
          };
        }
        if (u.status === 400 && /upgrade request required|missing upgrade headers/i.test(err)) {
          return {
            code: 'hop-stripped-upgrade',
            summary: `The API server received the ${what(r)} request without its upgrade headers and answered 400 (${u.statusReason ?? 'BadRequest'}).`,
            check: `An L7 hop dropped \`Connection: Upgrade\` / \`Upgrade\` on the way (nginx without \`proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"\` and \`proxy_http_version 1.1\`, for example).`,
          };
        }
        if (u.status === 403 && r.transport === 'websocket') {
          return {
            code: 'rbac-websocket-create',
            summary: `The API server refused the ${what(r)} upgrade with 403 Forbidden${u.statusReason ? ` (${u.statusReason})` : ''}.`,
            check: `WebSocket upgrades are GET requests: they need "get" on pods/${r.operation}, and from Kubernetes 1.35 also "create"${context.serverVersion ? ` (server ${context.serverVersion})` : ''}. Grant both verbs; SPDY (POST) needs only "create".`,
          };
        }
        return {
          code: 'api-server-refused',
          summary: `The API server itself refused the ${what(r)} upgrade: HTTP ${u.status}${u.statusReason ? ` ${u.statusReason}` : ''}.`,
          check: u.status === 403 ? `RBAC: SPDY upgrades need "create" on pods/${r.operation}.` : `Read the Status message: ${err}`.trim(),
        };
      }
      case 'UPGRADE_TIMEOUT':
        return {
          code: 'upgrade-no-answer',
          summary: `The ${what(r)} upgrade request got no answer${u.phases.tcpMs !== undefined || u.phases.proxyMs !== undefined ? ' although the connection was made' : ''}.`,
          check: 'A buffering hop holds upgrade requests (e.g. Envoy with a buffer filter, a proxy waiting for a request body, an HTTP/2-only hop). Look for request buffering or HTTP/2 conversion on the path. kubectl waits and does not fall back.',
        };
      case 'UPGRADE_BAD_RESPONSE':
        return {
          code: 'bad-upgrade-response',
          summary: `A 101 came back for the ${what(r)} upgrade, but not the one the protocol needs: ${err}`,
          check: 'A hop rewrote the handshake (dropped Sec-WebSocket-Protocol or X-Stream-Protocol-Version). kubectl treats this as an upgrade failure and falls back to SPDY.',
        };
      case 'DIAL_PROXY':
        return {
          code: 'proxy-refused-tunnel',
          summary: `The forward proxy refused the tunnel for the ${what(r)}: ${err}`,
          check: 'kubectl tunnels every upgrade through the proxy with CONNECT and does not fall back when the proxy refuses it. Allow CONNECT to the API server (its port too) in the proxy.',
        };
      case 'DIAL_DNS':
      case 'DIAL_REFUSED':
      case 'DIAL_TIMEOUT':
      case 'DIAL_TLS':
      case 'DIAL_FAILED':
        return { code: 'unreachable', summary: `Could not reach the API server for the ${what(r)}: ${err}`, check: 'Check DNS, routing and security groups from this location.' };
      default:
        return { code: 'upgrade-failed', summary: `The ${what(r)} upgrade failed: ${err || 'unknown error'}`, check: 'A hop broke the connection during the handshake.' };
    }
  }
  if (r.firstEchoMs === null && r.errorCode === 'STREAM_ERROR') {
    return {
      code: 'stream-error-after-upgrade',
      summary: `The ${what(r)} upgraded (101), then the server sent an error on the error stream: ${errorText(r, r.error).replace(/^the first echo failed: the upgrade succeeded, then the server reported: /, '')}`,
      check:
        'Not a hop refusing the upgrade (that would be a non-101), and kubectl does not fall back after a 101. From 1.36 the API server passes WebSockets to kubelets that declare ExtendWebSocketsToKubelet: check that node\'s kubelet and CRI streaming server (cri-dockerd returning a scheme-less URL: Mirantis/cri-dockerd#560) and the network between the API server and that kubelet.',
    };
  }
  if (r.firstEchoMs === null) {
    return { code: 'channel-broken', summary: `The ${what(r)} upgraded (101), then ${errorText(r, r.error).replace(/^the first echo failed: /, 'its first echo failed: ')}`, check: 'A hop passes the handshake but not the stream (e.g. it buffers or rewrites the upgraded bytes).' };
  }
  const h = r.hold;
  if (h.survived === false) {
    if (h.cause === 'echo-timeout') {
      return {
        code: 'black-hole',
        summary: `After a ${r.holdSeconds} s idle hold the ${what(r)} connection stayed open but nothing came back.`,
        check: 'A hop silently dropped the idle flow without closing it (NAT or conntrack timeout, stateful firewall). Look for idle timeouts shorter than the hold.',
      };
    }
    if (h.cause === 'protocol-error') {
      return { code: 'stream-corrupted', summary: `The ${what(r)} stream was corrupted during the hold.`, check: 'A hop altered bytes inside the upgraded connection.' };
    }
    if (h.cause === 'no-pong') {
      return { code: 'no-pong', summary: `The ${what(r)} lost its keepalive: no pong for ${seconds(WS_PONG_DEADLINE_MS)}.`, check: 'A hop answers or drops WebSocket control frames; kubectl gives up exactly the same way.' };
    }
    const cut = holdCut(r);
    if (cut) return cut;
    return { code: 'lost-during-hold', summary: `The ${what(r)} session was lost during the ${r.holdSeconds} s hold (${h.cause ?? 'unknown'}).`, check: 'Look for idle timeouts on the path.' };
  }
  if (r.error) return { code: 'session-error', summary: `The ${what(r)} session failed: ${errorText(r, r.error)}`, check: 'See the error.' };
  return undefined;
}

/** Findings that compare results: keepalive modes, exec against port-forward. */
export function crossFindings(results: readonly SessionResult[]): Diagnosis[] {
  const out: Diagnosis[] = [];
  const find = (r: SessionResult, change: Partial<SessionResult>) =>
    results.find((x) => (['operation', 'transport', 'keepalive', 'holdSeconds'] as const).every((k) => x[k] === ((change as Record<string, unknown>)[k] ?? r[k])));
  for (const r of results) {
    if (r.keepalive !== 'kubectl' || r.holdSeconds === 0 || !r.upgrade.ok || !r.ok) continue;
    const bare = find(r, { keepalive: 'none' });
    if (!bare || !bare.upgrade.ok || bare.hold.survived !== false) continue;
    const at = bare.hold.idleSeconds ?? bare.hold.disconnectSeconds;
    out.push({
      code: 'keepalive-dependent',
      summary: `${what(r)}: with kubectl's keepalive pings the session survived the ${r.holdSeconds} s hold; without pings it was cut${at !== null && at !== undefined ? ` after ${fmt(at)} s idle` : ''}.`,
      check: `kubectl itself is fine on this path, but clients that send no pings (browser terminals, SDK clients) will break${at !== null && at !== undefined ? ` at about ${Math.round(at)} s` : ''}. Raise the hop's idle timeout if they matter.`,
    });
  }
  for (const r of results) {
    if (r.operation !== 'exec') continue;
    const pf = find(r, { operation: 'portforward' });
    if (!pf || pf.ok === r.ok) continue;
    const [good, bad] = r.ok ? [r, pf] : [pf, r];
    out.push({
      code: 'exec-portforward-disagree',
      summary: `${TRANSPORT_WORDS[r.transport]} ${opWords(good)} works but ${opWords(bad)} does not (keepalive "${r.keepalive}", hold ${r.holdSeconds} s).`,
      check:
        r.transport === 'websocket'
          ? `They are separate server features (TranslateStreamCloseWebsocketRequests for exec, PortForwardWebsockets for port-forward) and use different keepalives (${seconds(WS_PING_PERIOD_MS)} WebSocket pings vs ${seconds(TUNNEL_PING_PERIOD_MS)} SPDY pings in the tunnel). Check both gates and the idle timeout against ${seconds(TUNNEL_PING_PERIOD_MS)}.`
          : 'They use different subresources and RBAC (pods/exec vs pods/portforward); check both.',
    });
  }
  const seen = new Set<string>();
  return out.filter((d) => (seen.has(d.summary) ? false : (seen.add(d.summary), true)));
}
