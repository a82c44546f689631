/**
 * Turns results into the likely broken hop, in plain words, with the measured
 * numbers and what to check next (docs/architecture.md, "Verdicts and
 * diagnosis"; codes in docs/diagnoses.md).
 */
import { sizeText } from './terminal.js';
import net from 'node:net';
import { WS_PONG_DEADLINE_MS, kubectlPingPeriodMs, seconds } from '../streaming/keepalive.js';
import { clip } from '../text.js';
import { OPERATION_WORDS, type Transport } from '../vocabulary.js';
import { hopFix, identifyHop } from './hop-products.js';
import { CLOSE_GRACE_MS } from './session-options.js';
import { refusedByHopRule, upgradeStripped } from './upgrade-refusal.js';
import { sessionWords } from './row-text.js';
import { devicesAt, deviceList } from './idle-devices.js';
import { forgotten } from './idle-bracket.js';
import { flowForgotten, lifetimeCap, mtuBlackHole } from './flow-diagnosis.js';
import { kubectlOnCut } from './kubectl-on-cut.js';
import { transferDiagnosis } from './transfer-diagnosis.js';
import { oneDirectionCut } from './shape-diagnosis.js';
import type { Diagnosis, IdleBracket, LifetimeCheck, SessionResult } from './types.js';
import { heldAlike } from './types.js';

const UPGRADE_LINE: Readonly<Record<Transport, string>> = {
  websocket: 'GET with `Connection: Upgrade` and `Upgrade: websocket`',
  spdy: 'POST with `Connection: Upgrade` and `Upgrade: SPDY/3.1`',
};
export const opWords = (r: SessionResult) => OPERATION_WORDS[r.operation];
export const what = (r: SessionResult) => sessionWords(r);

/**
 * A hop's own cut at `s` seconds of idle, in words: the documented timers that close there, and the lifetime caps
 * that end connections there whatever moves (idle-devices.ts); undefined when none is near.
 */
export function knownTimeoutNear(s: number): string | undefined {
  const closes = devicesAt('closes', s);
  const caps = devicesAt('lifetime', s);
  const parts = [
    ...(closes.length ? [`the idle timer of ${deviceList(closes)}`] : []),
    ...(caps.length ? [`the connection lifetime of ${deviceList(caps)}, which pings do not extend`] : []),
  ];
  return parts.length ? parts.join(', or ') : undefined;
}

/** Seconds as people read them: one decimal below 100 s. */
export const fmt = (s: number) => (s >= 100 ? s.toFixed(0) : s.toFixed(1));

/** The gist of a refusal body: an HTML page's title, else its first words, never cut mid-word. */
export function bodyGist(body: string): string {
  const title = /<title>([^<]{1,120})<\/title>/i.exec(body)?.[1]?.trim();
  if (title) return title;
  return clip(
    body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
    80,
  );
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

/** What one session sits next to in its run: the other sessions, for the no-ping twin of a kubectl-keepalive hold. */
export interface DiagnosisContext {
  readonly proxy?: string;
  readonly serverVersion?: string | null;
  /** Every session of the run (the same cluster). */
  readonly peers?: readonly SessionResult[];
  /** A device on the path forgets idle flows: its timeout, bracketed (idle-bracket.ts). */
  readonly idle?: IdleBracket;
  /** The lifetime check's answer, when the run made one (activity-check.ts). */
  readonly lifetime?: LifetimeCheck;
}

/** The same session held without pings, when it was cut during its hold: it measured the hop's own idle timeout. */
export function noPingTwin(r: SessionResult, peers: readonly SessionResult[] = []): SessionResult | undefined {
  // Held without pings over the same transport: a `none` session, else an SDK client's (WebSocket, no pings).
  const twin = (keepalive: 'none' | 'sdk') =>
    peers.find(
      (x) =>
        x !== r &&
        x.keepalive === keepalive &&
        heldAlike(x, r) &&
        x.upgrade.ok &&
        x.hold.survived === false &&
        // Cut by the hop (it measured its timer), or its flow forgotten (a black hole has no disconnect time).
        (x.hold.disconnectSeconds !== null || forgotten(x)),
    );
  return r.keepalive === 'kubectl' ? (twin('none') ?? twin('sdk')) : undefined;
}

/** Seconds nothing moved before a cut (the hop's idle timer): since the last byte, else since the last data. */
export const idleBeforeCut = (r: SessionResult): number => r.hold.idleSeconds ?? r.hold.sinceDataSeconds ?? r.hold.disconnectSeconds ?? 0;

/**
 * Whether kubectl itself reports nothing when a hop cuts this kind of session. Proven with real kubectl through
 * real nginx and HAProxy idle cuts (test/lab/silent-exit.test.ts): SPDY exec exits 0 with empty stderr
 * (client-go reads EOF on every stream as a clean end); WebSocket exec exits 1 ("close 1006 (abnormal closure)");
 * port-forward prints "lost connection to pod" (kubectl-on-cut.ts says each).
 */
export function exitsSilently(r: SessionResult): boolean {
  return r.operation === 'exec' && r.transport === 'spdy' && (r.hold.cause === 'fin' || r.hold.cause === 'rst');
}

/** A session cut during its hold: an idle timeout, or one shorter than kubectl's ping interval on this session. */
function holdCut(r: SessionResult, peers: readonly SessionResult[], lifetime?: LifetimeCheck): Diagnosis | undefined {
  const h = r.hold;
  if (h.disconnectSeconds === null) return undefined;
  // The lifetime check found a cap at the time this session was cut: not an idle timer at all.
  if (lifetime?.outcome === 'lifetime-cap' && Math.abs(h.disconnectSeconds - lifetime.cutSeconds) <= Math.max(1.5, lifetime.cutSeconds * 0.1))
    return lifetimeCap(r, lifetime);
  const sinceData = h.sinceDataSeconds ?? h.disconnectSeconds;
  const idle = idleBeforeCut(r);
  const twin = r.keepalive === 'kubectl' ? noPingTwin(r, peers) : undefined;
  // Every stated timeout comes from the no-ping measurement when the run has one: pings shorten "idle" here.
  const timeout = twin ? idleBeforeCut(twin) : idle;
  const measured = twin ? `measured without pings: about ${Math.round(timeout)} s` : `about ${Math.round(timeout)} s`;
  const near = knownTimeoutNear(timeout);
  const where = `during ${/^(8|11$|18$)/.test(String(r.holdSeconds)) ? 'an' : 'a'} ${r.holdSeconds} s hold (${h.cause})`;
  const silent = exitsSilently(r) ? ` On such a cut ${kubectlOnCut(r.operation, r.transport, 'closed')}.` : '';
  const pingSeconds = kubectlPingPeriodMs(r.operation, r.transport) / 1000;
  // The 101 came through a proxy that named itself: the likely owner of the timer, and its setting (not proven:
  // a device further in, an NLB behind it, may be the one that cut).
  const hop = identifyHop(r.upgrade);
  const owner = hop ? ` The 101 came through a hop that names itself, the first suspect: ${hopFix('idle', hop)}` : '';
  if (r.keepalive === 'kubectl' && timeout < pingSeconds) {
    return {
      code: 'idle-timeout',
      summary: `The ${what(r)} session was cut after ${fmt(idle)} s with no byte moving ${where}: kubectl's keepalive on this session sends its first ping after ${pingSeconds} s.`,
      check: `The hop's idle timeout (${measured}) is shorter than kubectl's ping interval on this session (${pingSeconds} s), so kubectl's own keepalive cannot keep it open. Raise it well above ${pingSeconds} s.${owner}${silent}`,
    };
  }
  if (r.keepalive === 'kubectl') {
    return {
      code: 'idle-timeout',
      summary: `The ${what(r)} session was cut ${fmt(sinceData)} s after its last data ${where}, with kubectl's keepalive (a ping every ${pingSeconds} s; the last byte moved ${fmt(idle)} s before the cut, ${fmt(h.disconnectSeconds)} s after the 101).`,
      check: `${near ? `That is ${near}.` : `A hop (load balancer, proxy, NAT) cut it; its idle timeout${twin ? ', measured without pings,' : ''} is about ${Math.round(timeout)} s.`} ${twin ? "Compare the rows without pings: when they are cut as early, the hop does not count kubectl's pings as activity." : "Probe with --keepalive none too: without pings the same hold measures the hop's own idle timeout."} Raise the timeout above the longest quiet period you need.${owner}${silent}`,
    };
  }
  return {
    code: 'idle-timeout',
    summary: `The ${what(r)} session was cut after ${fmt(idle)} s with no byte moving ${where}, without pings (${fmt(h.disconnectSeconds)} s after the 101).`,
    check: `${near ? `That is ${near}.` : `A hop (load balancer, proxy, NAT) has an idle timeout of about ${Math.round(idle)} s.`} ${whatPingsDid(r, peers, idle, pingSeconds)} Raise it for clients that send no pings.${owner}${silent}`,
  };
}

/**
 * What kubectl's pings did on this path, for a session held without them: one conclusion from what the run measured
 * (issue 53: a no-ping row said pings keep it open "only if the timeout is longer" beside a pings-ignored finding
 * saying they do not count). Its twin held with kubectl's pings survived (they count), was cut as early (they do
 * not), or there is none (then only the arithmetic of ping period against the timeout, said as such).
 */
function whatPingsDid(r: SessionResult, peers: readonly SessionResult[], idle: number, pingSeconds: number): string {
  const withPings = peers.find((x) => x !== r && x.keepalive === 'kubectl' && heldAlike(x, r) && x.upgrade.ok);
  if (withPings?.hold.survived === true) return `kubectl's pings (every ${pingSeconds} s on this session) kept its session open through the same hold.`;
  if (withPings?.hold.survived === false && withPings.hold.disconnectSeconds !== null) {
    return idle < pingSeconds
      ? `kubectl's session was cut too: its pings come every ${pingSeconds} s, less often than the hop's timeout.`
      : `kubectl's session was cut as early, although its pings (every ${pingSeconds} s) came more often: the hop does not count them as activity.`;
  }
  return idle < pingSeconds
    ? `kubectl pings this session every ${pingSeconds} s, less often than that: kubectl is cut too.`
    : `kubectl pings this session every ${pingSeconds} s, more often than that: its pings keep it open if the hop counts them (hold with --keepalive kubectl to see).`;
}

/**
 * The process echoed, stdin was closed as kubectl closes it, and no exit status came while the connection stayed
 * open: stdin's end was lost between here and the process. What kubectl does then was measured with real kubectl
 * 1.29 (SPDY), 1.33 and 1.36 (WebSocket v5) against the emulator's loseStdinEof fault (test/interop/stdin-eof.test.ts):
 * `kubectl exec -i … -- cat < file` prints everything and never exits.
 */
function stdinEofLost(r: SessionResult): Diagnosis {
  const how =
    r.transport === 'spdy'
      ? "the SPDY stdin stream's FIN"
      : r.subprotocol === 'v5.channel.k8s.io'
        ? "v5.channel.k8s.io's close signal for stdin (channel 255)"
        : `nothing: ${r.subprotocol ?? 'this subprotocol'} has no way to close stdin (only v5.channel.k8s.io does)`;
  return {
    code: 'stdin-eof-lost',
    summary: `The ${what(r)} echoed, then stdin was closed (${how}) and the process had not exited ${CLOSE_GRACE_MS / 1000} s later: no exit status came while the connection stayed open.`,
    check:
      "Something between here and the process does not pass stdin's end (or holds the exit status back), so `kubectl exec -i … -- cat < file` and `kubectl cp` into the pod never exit (kubectl waits for the exit status). Over WebSocket only v5.channel.k8s.io can close stdin (kubectl and API server 1.30+); check the kubelet's and the container runtime's streaming leg, and any hop that rewrites WebSocket frames.",
  };
}

/** A terminal session whose process reads another size than was sent (terminal.ts). */
function ttySizeLost(r: SessionResult): Diagnosis {
  const t = r.terminal;
  const atStart = !t?.resized;
  const check = atStart ? t?.start : t?.resized;
  const seen = check?.seen ? sizeText(check.seen) : 'no size';
  const sent = check ? sizeText(check.sent) : 'the size';
  const channel = r.transport === 'spdy' ? 'the SPDY resize stream' : 'WebSocket channel 4';
  return {
    code: 'tty-resize-lost',
    summary: atStart
      ? `The ${what(r)} terminal session echoed, but its process reads ${seen} where ${sent} was sent with the upgrade (${channel}): the size never reached the terminal.`
      : `The ${what(r)} terminal session echoed, but after a resize to ${sent} (${channel}) its process still reads ${seen}.`,
    check: `kubectl ${OPERATION_WORDS[r.operation]} -it connects and runs commands here, but its terminal keeps the wrong size: full-screen programs (vim, top, less) draw at the wrong size and never redraw when the window changes, and long lines wrap wrongly. Something between kubectl and the process drops the resize messages: check the kubelet's and the container runtime's streaming leg (the runtime applies the size to the pty) and any hop that rewrites WebSocket frames or SPDY streams.`,
  };
}

/** An upload (`kubectl cp file pod:`) whose every byte the stream took, and whose count never came. */
function uploadEofLost(r: SessionResult): Diagnosis {
  const t = r.transfer!;
  return {
    code: 'stdin-eof-lost',
    summary: `The ${what(r)} upload of ${t.bytes} bytes was written whole and stdin closed, but the pod's count of what arrived did not come for ${t.longestStallSeconds} s while the connection stayed open.`,
    check:
      "stdin's end (or the last bytes before it) never reached the process, so it never finished reading: `kubectl cp file pod:/path` never exits on this path (its `tar xf -` waits for the end of its input; measured with kubectl 1.29 and 1.36, test/interop/stdin-eof.test.ts). Check the kubelet's and the container runtime's streaming leg, and any hop that rewrites WebSocket frames or SPDY streams.",
  };
}

/** A connection that stayed open while nothing came back, and nothing in the run dates it. */
function blackHole(r: SessionResult): Diagnosis {
  const u = r.hold.quiet?.unanswered;
  return {
    code: 'black-hole',
    summary: `After a ${r.holdSeconds} s idle hold the ${what(r)} connection stayed open but nothing came back${u ? ` (its first unanswered packet went ${fmt(u.atSeconds)} s after the 101, after ${fmt(u.quietSeconds)} s of quiet)` : ''}.`,
    check: `A hop dropped the flow without closing it: a device that forgets idle flows (NAT gateway, connection tracking, stateful firewall) or a path that went dark. No packet after any quiet gap was answered, so nothing dates it: hold without pings for a shorter time as well, or give the run time for its ladder (--follow-up-budget). On such a path ${kubectlOnCut(r.operation, r.transport, 'no-reply')}.`,
  };
}

/** Why one failed session failed. */
export function explainFailure(r: SessionResult, context: DiagnosisContext): Diagnosis | undefined {
  if (r.ok) return undefined;
  const u = r.upgrade;
  if (!u.ok) {
    // A refused certificate; a handshake broken by the network stays "unreachable" below.
    if (u.tls) return tlsDiagnosis(r, u.tls, context);
    const err = errorText(r, u.error);
    switch (u.errorCode) {
      case 'UPGRADE_REJECTED': {
        const hop = identifyHop(u);
        if (!u.kubernetesStatus) {
          const gist = u.bodyPrefix ? `: "${bodyGist(u.bodyPrefix)}"` : '';
          // 403/405 is a rule refusing the request; anything else a hop that cannot (or will not) carry the upgrade.
          const byRule = refusedByHopRule(u);
          return {
            code: 'hop-refused-upgrade',
            summary: `The ${what(r)} upgrade was answered with HTTP ${u.status} by ${hop ? `${hop.product.name} (${hop.evidence}), not the API server` : 'something that is not the API server'} (the body is not a Kubernetes Status${gist}).`,
            check: `A hop between here and the API server refuses the ${UPGRADE_LINE[r.transport]}${byRule ? ' by a rule' : ''}. ${hopFix(byRule ? 'rule' : 'upgrade', hop)}${context.proxy ? ` A forward proxy is configured: ${context.proxy}.` : ''}`,
          };
        }
        if (upgradeStripped(u)) {
          return {
            code: 'hop-stripped-upgrade',
            summary: `The API server received the ${what(r)} request without its upgrade headers and answered 400 (${u.statusReason ?? 'BadRequest'})${hop ? `; the reply came through ${hop.product.name} (${hop.evidence})` : ''}.`,
            check: `A hop dropped \`Connection: Upgrade\` / \`Upgrade\` on the way. ${hopFix('upgrade', hop)}`,
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
          check:
            'A buffering hop holds upgrade requests (e.g. Envoy with a buffer filter, a proxy waiting for a request body, an HTTP/2-only hop). Look for request buffering or HTTP/2 conversion on the path. kubectl waits and does not fall back.',
        };
      case 'UPGRADE_BAD_RESPONSE':
        return {
          code: 'bad-upgrade-response',
          summary: `A 101 came back for the ${what(r)} upgrade, but not the one the protocol needs: ${err}`,
          check:
            'A hop rewrote the handshake (dropped Sec-WebSocket-Protocol or X-Stream-Protocol-Version). kubectl treats this as an upgrade failure and falls back to SPDY.',
        };
      case 'DIAL_PROXY': {
        const hop = identifyHop(u);
        const gist = u.bodyPrefix && !hop?.evidence.includes(bodyGist(u.bodyPrefix)) ? ` Its page: "${bodyGist(u.bodyPrefix)}".` : '';
        return {
          code: 'proxy-refused-tunnel',
          summary: `The forward proxy${hop ? `, ${hop.product.name} (${hop.evidence}),` : ''} refused the tunnel for the ${what(r)}: ${err}.${gist}`,
          check: `kubectl tunnels every upgrade through the proxy with CONNECT and does not fall back when the proxy refuses it. ${hopFix('connect', hop)}`,
        };
      }
      case 'DIAL_DNS':
      case 'DIAL_REFUSED':
      case 'DIAL_TIMEOUT':
      case 'DIAL_TLS':
      case 'DIAL_FAILED':
        return {
          code: 'unreachable',
          summary: `Could not reach the API server for the ${what(r)}: ${err}`,
          check: 'Check DNS, routing and security groups from this location.',
        };
      default:
        return {
          code: 'upgrade-failed',
          summary: `The ${what(r)} upgrade failed: ${err || 'unknown error'}`,
          check: 'A hop broke the connection during the handshake.',
        };
    }
  }
  if (r.firstEchoMs === null && r.errorCode === 'STREAM_ERROR') {
    return {
      code: 'stream-error-after-upgrade',
      summary: `The ${what(r)} upgraded (101), then the server sent an error on the error stream: ${errorText(r, r.error).replace(/^the first echo failed: the upgrade succeeded, then the server reported: /, '')}`,
      check:
        "Not a hop refusing the upgrade (that would be a non-101), and kubectl does not fall back after a 101. From 1.36 the API server passes WebSockets to kubelets that declare ExtendWebSocketsToKubelet: check that node's kubelet and CRI streaming server (cri-dockerd returning a scheme-less URL: Mirantis/cri-dockerd#560) and the network between the API server and that kubelet.",
    };
  }
  if (r.firstEchoMs === null) {
    return {
      code: 'channel-broken',
      summary: `The ${what(r)} upgraded (101), then ${errorText(r, r.error).replace(/^the first echo failed: /, 'its first echo failed: ')}`,
      check: 'A hop passes the handshake but not the stream (e.g. it buffers or rewrites the upgraded bytes).',
    };
  }
  if (r.transfer) {
    // Nothing of a transfer came back although the echoes just before it did: full-size packets vanish.
    // An upload gets nothing back until the pod's count: every byte taken and no count is stdin's end lost.
    if (r.transferShape === 'upload' && r.transfer.end === 'stalled' && r.transfer.sentBytes >= r.transfer.bytes) return uploadEofLost(r);
    if (r.transfer.end === 'stalled' && r.transfer.receivedBytes === 0 && r.transferShape !== 'upload') return mtuBlackHole(r);
    const d = transferDiagnosis(r);
    if (d) return d;
    if (r.transfer.end === 'mismatch')
      return {
        code: 'stream-corrupted',
        summary: `The ${what(r)} transfer came back altered: ${errorText(r, r.error)}`,
        check:
          'A hop altered bytes inside the upgraded connection (a content filter, a broken TLS-intercepting proxy): `kubectl cp` would write a corrupt file.',
      };
  }
  const h = r.hold;
  if (h.survived === false) {
    // A device that forgot the flow: reset in answer to our packet, or no answer at all (a black hole, a pong deadline).
    if (forgotten(r)) {
      const idle = context.idle;
      // Nothing answered after any quiet gap and nothing proving idleness: a silent loss nothing dates.
      const undated = h.quiet!.cut === 'no-reply' && (!idle || (idle.aboveSeconds === 0 && idle.proof === 'unchecked'));
      if (idle && !undated) return flowForgotten(r, idle);
      if (h.quiet!.cut === 'reset-reply') return flowForgotten(r, undefined);
      // Pings unanswered where data after longer gaps was answered: no forgotten flow, a hop drops control frames.
      if (!(h.cause === 'no-pong' && !idle)) return blackHole(r);
    }
    if (h.cause === 'echo-timeout') return blackHole(r);
    if (h.cause === 'protocol-error') {
      return {
        code: 'stream-corrupted',
        summary: `The ${what(r)} stream was corrupted during the hold.`,
        check: 'A hop altered bytes inside the upgraded connection.',
      };
    }
    if (h.cause === 'no-pong') {
      return {
        code: 'no-pong',
        summary: `The ${what(r)} lost its keepalive: no pong for ${seconds(WS_PONG_DEADLINE_MS)}.`,
        check: 'A hop answers or drops WebSocket control frames; kubectl gives up exactly the same way.',
      };
    }
    const cut = oneDirectionCut(r) ?? holdCut(r, context.peers ?? [], context.lifetime);
    if (cut) return cut;
    return {
      code: 'lost-during-hold',
      summary: `The ${what(r)} session was lost during the ${r.holdSeconds} s hold (${h.cause ?? 'unknown'}).`,
      check: 'Look for idle timeouts on the path.',
    };
  }
  if (r.errorCode === 'TTY_SIZE_LOST') return ttySizeLost(r);
  if (r.errorCode === 'EXEC_NO_STATUS' && r.operation === 'exec' && r.exitCode === null && /after stdin was closed: no exit status within/.test(r.error ?? ''))
    return stdinEofLost(r);
  if (r.error) return { code: 'session-error', summary: `The ${what(r)} session failed: ${errorText(r, r.error)}`, check: 'See the error.' };
  return undefined;
}
