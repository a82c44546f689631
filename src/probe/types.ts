/** The probe's plan and results: the JSON contract of docs/architecture.md. */
import type { TerminalCheck } from './terminal.js';
import type { DialPhases } from '../net/dial.js';
import type { EndCause } from '../streaming/end-cause.js';
import type { DiagnosisCode } from './diagnosis-codes.js';
import type { KubectlExperience } from './kubectl-clients.js';
import type { KeepaliveMode, Operation, Transport } from '../streaming/types.js';
import type { HoldShape, RunPlan, TransferShape } from '../vocabulary.js';
import type { ConnectionConfig } from '../net/connection.js';
import type { TransferOutcome } from './transfer.js';
import type { OwnCpu } from './own-cpu.js';
import type { WireTrace } from './evidence.js';
import type { ContainerSource } from './container-choice.js';

export interface ClusterTarget {
  /** Name used in results and metrics. */
  readonly name: string;
  readonly connection: ConnectionConfig;
  readonly namespace: string;
  readonly pod: string;
  readonly container?: string;
  /** The pod's TCP echo port, for port-forward. */
  readonly port: number;
}

/** A target as configured: a pod by name, or (no name) the first Running pod matching `selector`. */
export type TargetSpec = Omit<ClusterTarget, 'pod'> & {
  readonly pod?: string;
  /** Label selector (k=v,…); default TARGET_SELECTOR (src/kube/target.ts). */
  readonly selector?: string;
};

/** A run of the engine: the one RunPlan (vocabulary.ts), where, against which target. */
export interface ProbePlan extends RunPlan {
  readonly location: string;
  readonly cluster: TargetSpec;
  /** How long one echo may take, ms. */
  readonly echoTimeoutMs?: number;
}

export interface SessionSpec {
  readonly operation: Operation;
  readonly transport: Transport;
  readonly keepalive: KeepaliveMode;
  readonly holdSeconds: number;
  /** A transfer session (`--transfer SIZE`): this many bytes through and back instead of a hold. */
  readonly transferBytes?: number;
  /** What moves during the hold (`--hold-shape`, exec only); absent is `silent`. */
  readonly holdShape?: HoldShape;
  /** How a transfer moves (`--transfer-shape`); absent is `echo`. */
  readonly transferShape?: TransferShape;
  /**
   * Not a plan's: the follow-ups' activity check (activity-check.ts) echoes every this many seconds through its hold,
   * so application data keeps moving both ways; the hold is lost at the first echo that fails.
   */
  readonly echoEverySeconds?: number;
}

/** The row a session belongs to: one A/B per operation × keepalive × hold × hold shape × transfer. */
export function rowKey(s: Omit<SessionSpec, 'transport'>): string {
  return `${s.operation}|${s.keepalive}|${s.holdSeconds}|${s.holdShape ?? 'silent'}|${s.transferBytes ?? 0}|${s.transferShape ?? 'echo'}`;
}

/** The same session but for its keepalive: one operation, transport, hold, hold shape and transfer (a twin held otherwise). */
export function heldAlike(a: SessionSpec, b: SessionSpec): boolean {
  return a.transport === b.transport && rowKey({ ...a, keepalive: 'none' }) === rowKey({ ...b, keepalive: 'none' });
}

export interface UpgradeOutcome {
  readonly ok: boolean;
  /** HTTP status of the answer (101 on success); null when none came. */
  readonly status: number | null;
  /** Dial start → 101, ms; null when no 101. */
  readonly handshakeMs: number | null;
  /** How much of the handshake our own CPU may account for (own-cpu.ts); on a 101 only. */
  readonly ownCpu?: OwnCpu;
  readonly phases: DialPhases & { upgradeMs?: number };
  /** Plain-words error, never a secret. */
  readonly error: string | null;
  readonly errorCode: string | null;
  /** Whether a refusal's body was a Kubernetes Status (the API server answered) or not (a hop did). */
  readonly kubernetesStatus: boolean | null;
  readonly statusReason?: string;
  readonly bodyPrefix?: string;
  /** The reply's Server header, when a refusal (or a refused CONNECT) carried one (it often names the hop). */
  readonly server?: string;
  /** The reply's Via header, when a refusal carried one (Varnish, squid and other proxies add it). */
  readonly via?: string;
  /** The hop that answered, when the reply names it (Server, Via, its error page): `hopIdentity()`. */
  readonly hop?: string;
  /** For a certificate that was refused (DIAL_TLS): whose, the name checked, what it holds, who issued it. */
  readonly tls?: {
    readonly peer: 'server' | 'proxy';
    readonly checkedName: string;
    readonly certificateNames?: string;
    readonly issuer?: string;
    readonly untrusted: boolean;
  };
}

/** How a session was lost (EndCause, src/streaming/end-cause.ts); `local` never counts as a loss. */
export type HoldCause = Exclude<EndCause, 'local'>;

export interface HoldOutcome {
  /** null when the session never reached the hold. */
  readonly survived: boolean | null;
  /** Seconds from the 101 to the loss, when it was lost during or right after the hold. */
  readonly disconnectSeconds: number | null;
  readonly cause: HoldCause | null;
  /** Seconds from the last application data (the echo before the hold) to the loss. */
  readonly sinceDataSeconds?: number | null;
  /** For an interrupted hold: how long it had held, s. */
  readonly heldSeconds?: number | null;
  /**
   * Seconds from the last byte that moved either way (keepalive pings included) to the loss, to 0.1 s; a packet of
   * ours that was never answered does not count as movement.
   */
  readonly idleSeconds?: number | null;
  /** The quiet gaps our packets crossed during the hold (hold-activity.ts): what dates a device that forgets idle flows. */
  readonly quiet?: QuietEvidence;
}

/**
 * What the wire showed during a hold, to 0.1 s. A quiet gap is a time nothing moved either way; a packet of ours after
 * one was either answered (the flow was still known: the device's idle timeout is longer) or not.
 */
export interface QuietEvidence {
  /** The longest quiet gap after which a packet of ours was answered, s; null when none was. */
  readonly answeredQuietSeconds: number | null;
  /** The first packet of ours that was never answered: the quiet gap before it, and when it went (s since the 101). */
  readonly unanswered?: { readonly quietSeconds: number; readonly atSeconds: number };
  /**
   * How the session ended, when it did not survive: `hop` (nothing of ours was outstanding: the hop ended it on its own
   * timer or rule), `reset-reply` (a reset within a round trip of a packet of ours: a device had forgotten the flow
   * and answered its next packet with a reset), `no-reply` (a packet of ours was never answered: the flow vanished
   * silently; the session ended later by an echo's timeout, our pong deadline or the kernel giving up).
   */
  readonly cut?: 'hop' | 'reset-reply' | 'no-reply';
}

export interface SessionResult extends SessionSpec {
  readonly subprotocol: string | null;
  readonly upgrade: UpgradeOutcome;
  /** The echo right after the upgrade, ms. */
  readonly firstEchoMs: number | null;
  readonly hold: HoldOutcome;
  /** The echo after the hold, ms. */
  readonly echoMs: number | null;
  /** exec only: the exit status after stdin was closed. */
  readonly exitCode: number | null;
  /** exec only, when any came: the bytes the pod wrote on stderr (read and dropped, as they arrived). */
  readonly stderrBytes?: number;
  /** SPDY, when any: the streams the server opened that the probe refused unread (RST_STREAM REFUSED_STREAM, as a client that opens every stream itself). */
  readonly streamsRefused?: number;
  /** A transfer session's numbers (transfer.ts). */
  readonly transfer?: TransferOutcome;
  /** A terminal session's sizes: sent with the upgrade, and after the resize; what the process read each time (terminal.ts). */
  readonly terminal?: { readonly start: TerminalCheck; readonly resized?: TerminalCheck };
  /** Upgrade, echo and hold all worked. */
  readonly ok: boolean;
  /** What went wrong after the upgrade, in plain words. */
  readonly error: string | null;
  /** Its stable code (docs/errors.md): ECHO_TIMEOUT, PORTFORWARD_ERROR, EXEC_NO_STATUS, DEADLINE… */
  readonly errorCode: string | null;
  readonly durationMs: number;
  /** How long the start pacer (start-pacer.ts) held this session back before it dialled, ms; absent when not at all. */
  readonly startWaitMs?: number;
  /** A failed session's wire: its upgrade request and reply, the control frames around its end (evidence.ts). */
  readonly wire?: WireTrace;
  /**
   * A session that failed before its hold (or transfer) began was tried once more on a fresh connection (retry.ts):
   * this result is that second attempt's; `first` is the attempt that failed.
   */
  readonly retry?: RetryRecord;
}

/** The second attempt's relation to the first: `passed` is a flap (counted as working, published as Flapping). */
export type RetryOutcome = 'passed' | 'failed-same' | 'failed-differently';

export interface RetryRecord {
  readonly outcome: RetryOutcome;
  /** The pause between the attempts, ms. */
  readonly pauseMs: number;
  readonly first: AttemptRecord;
}

/** An attempt that was retried: how it failed, and its wire. */
export interface AttemptRecord {
  readonly upgrade: Pick<UpgradeOutcome, 'ok' | 'status' | 'error' | 'errorCode' | 'handshakeMs' | 'server' | 'via' | 'hop' | 'bodyPrefix'>;
  readonly firstEchoMs: number | null;
  readonly error: string | null;
  readonly errorCode: string | null;
  readonly durationMs: number;
  readonly wire?: WireTrace;
}

/**
 * The A/B of one operation × keepalive × hold: `not-measured` when the probe
 * could not measure the path (its credentials, target or port), never a path verdict.
 */
/**
 * The A/B of one operation × keepalive × hold. With one transport probed (`--transports websocket`) there is
 * nothing to compare: `websocket-ok` / `websocket-fails` (`spdy-…`) say what that transport did, never which one a
 * hop breaks.
 */
export type VerdictName =
  | 'clean'
  | 'websocket-broken'
  | 'spdy-broken'
  | 'both-broken'
  | 'websocket-ok'
  | 'websocket-fails'
  | 'spdy-ok'
  | 'spdy-fails'
  | 'not-measured'
  /** Neither transport reached the API server (DNS, TCP or TLS failed before any HTTP): no A/B. */
  | 'unreachable'
  | 'interrupted';
export const BROKEN_VERDICTS: readonly VerdictName[] = ['websocket-broken', 'spdy-broken', 'both-broken', 'websocket-fails', 'spdy-fails'];

export interface Diagnosis {
  /** Stable code (DIAGNOSIS_CODES, docs/diagnoses.md), e.g. hop-refused-upgrade, idle-timeout. */
  readonly code: DiagnosisCode;
  /** What was seen, with the measured numbers. */
  readonly summary: string;
  /** What to check next. */
  readonly check: string;
}

/** One transport's session in a verdict: interrupted when the run was stopped before it finished. */
export type SessionCell = 'ok' | 'fail' | 'not-run' | 'interrupted';

export interface Verdict {
  readonly operation: Operation;
  readonly keepalive: KeepaliveMode;
  readonly holdSeconds: number;
  /** A transfer row: the bytes sent through each transport. */
  readonly transferBytes?: number;
  /** A hold shape other than silent. */
  readonly holdShape?: HoldShape;
  readonly transferShape?: TransferShape;
  readonly spdy: SessionCell;
  readonly websocket: SessionCell;
  readonly verdict: VerdictName;
  /** What each client of KUBECTL_CLIENTS (kubectl by version, a WebSocket-only client) would experience; null for holds without kubectl's keepalive and when not measured. */
  readonly kubectl: readonly KubectlExperience[] | null;
  readonly diagnosis: Diagnosis[];
}

export interface AccessSummary {
  readonly subresource: string;
  readonly verb: string;
  readonly allowed: boolean | null;
  /** Why it could not be read (allowed null): the review's own failure. */
  readonly unread?: string;
}

/** What the wire showed of a device that forgets idle flows. */
export interface IdleBracket {
  /** What it does with the next packet of a forgotten flow. */
  readonly atExpiry: 'reset' | 'drop';
  /** Its idle timeout t satisfies aboveSeconds < t ≤ atMostSeconds (0.1 s resolution). */
  readonly aboveSeconds: number;
  readonly atMostSeconds: number;
  /** How the ends were measured, in words. */
  readonly method: string;
  /** The ladder's sessions, when it ran: each one's quiet gap and what it met. */
  readonly rungs: readonly LadderRung[];
  /**
   * What shows the device times idleness: `sessions` (a session of the run moved bytes more often and kept its flow
   * known past the upper end), `check` (the activity check did, activity-check.ts), `not-idle` (the activity check was
   * lost although it echoed more often: the device drops flows some time after they began, whatever moves),
   * `unchecked` (nothing showed it either way).
   */
  readonly proof: 'sessions' | 'check' | 'not-idle' | 'unchecked';
  /** The activity check, when it ran: its echo period, its hold, and when it was lost (s after its 101). */
  readonly check?: { readonly everySeconds: number; readonly holdSeconds: number; readonly lostAtSeconds: number | null };
  /** The sessions the bracket came from: where the tightest upper end was seen (the ladder's rungs use it too). */
  readonly seenOn: {
    readonly operation: Operation;
    readonly transport: Transport;
    /** What the packet that set the upper end carried: a keepalive ping (a control frame) or application data. */
    readonly packet: 'ping' | 'data';
  };
}

export interface LadderRung {
  readonly quietSeconds: number;
  /** answered: the flow was still known; reset / no-answer: forgotten; closed: a hop ended it first; failed: no measurement. */
  readonly met: 'answered' | 'reset' | 'no-answer' | 'closed' | 'failed';
}

export interface LifetimeCheck {
  /** When the pinged and the silent session were cut, s after the 101 (their mean). */
  readonly cutSeconds: number;
  readonly transport: Transport;
  /** The check session: exec with kubectl's keepalive and an echo every `everySeconds`, held this long. */
  readonly holdSeconds: number;
  readonly everySeconds: number;
  /** lifetime-cap: cut again at about cutSeconds while data moved; data-only-timer: it survived; inconclusive otherwise. */
  readonly outcome: 'lifetime-cap' | 'data-only-timer' | 'inconclusive';
  /** The check's own cut, s after its 101, when it was cut. */
  readonly checkCutSeconds: number | null;
}

export interface ProbeReport {
  /** The kube-stream-probe version that measured it. */
  readonly probeVersion: string;
  readonly location: string;
  readonly cluster: string;
  readonly server: { readonly url: string; readonly version: string | null; readonly versionError?: string; readonly proxy?: string };
  /** The pod probed, and the selector it was found by when no name was given. */
  readonly target: {
    readonly namespace: string;
    readonly pod: string | null;
    readonly selector?: string;
    /** The container exec and attach ran in (sent as `container=`, as kubectl sends it), and how it was chosen. */
    readonly container?: string;
    readonly containerSource?: ContainerSource;
    /**
     * Why the label lookup failed on the path, when it did: the manifest's pod was then probed by name (its sessions
     * meet the same path and say how it failed).
     */
    readonly lookupError?: string;
  };
  readonly rbac: readonly AccessSummary[];
  readonly results: readonly SessionResult[];
  readonly verdicts: readonly Verdict[];
  /** Diagnoses that span several verdicts (exec vs port-forward, keepalive modes). */
  readonly findings: readonly Diagnosis[];
  /** A device on the path forgot idle flows: its idle timeout, bracketed (idle-bracket.ts, idle-ladder.ts). */
  readonly idleBracket?: IdleBracket;
  /** Sessions cut as early with pings as without: the check that told a lifetime cap from a data-only timer (activity-check.ts). */
  readonly lifetimeCheck?: LifetimeCheck;
  readonly startedAt: string;
  readonly durationMs: number;
}
