/**
 * What a transfer (`--transfer`, the `kubectl cp` path) that did not complete means, and what two completed
 * transfers say together. What real kubectl does on the same fault is measured, not assumed:
 * test/lab/kubectl-cp.test.ts runs kubectl 1.29 (SPDY) and 1.33 / 1.36 (WebSocket) against the emulator's
 * `truncate-tail` and asserts the words below.
 */
import { OPERATION_WORDS, TRANSPORT_WORDS } from '../vocabulary.js';
import type { Diagnosis, SessionResult } from './types.js';

const MiB = 1024 * 1024;
/** One transport's transfer this many times slower than the other's is a finding. */
export const SLOW_RATIO = 4;
/**
 * ...when the slower one took at least this long, s. A rate over less is a few scheduler slices: a 1 MiB transfer
 * takes ~20 ms on loopback, and one 80 ms pause of a busy probe host makes it "4× slower" with no hop involved.
 */
export const RATE_GAP_MIN_SECONDS = 1;

const size = (bytes: number) => (bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`);
const on = (r: SessionResult) => `${TRANSPORT_WORDS[r.transport]} ${OPERATION_WORDS[r.operation]}`;

/** What kubectl does when an exec's output loses its tail (measured: test/lab/kubectl-cp.test.ts). */
export const KUBECTL_ON_LOST_TAIL =
  '`kubectl exec -i … -- cat` exits 0 with the output short and nothing on stderr, and `kubectl cp` from the pod exits 1 with "error: unexpected EOF" (kubectl 1.29 over SPDY and 1.33/1.36 over WebSocket alike)';

/** Why one transfer did not complete; undefined when it did (or was not a transfer). */
export function transferDiagnosis(r: SessionResult): Diagnosis | undefined {
  const t = r.transfer;
  if (!t || t.end === 'complete' || t.end === 'mismatch') return undefined;
  const moved = `${t.receivedBytes} of ${t.bytes} bytes came back (${t.sentBytes} sent) in ${t.seconds} s`;
  switch (t.end) {
    case 'truncated':
      if (r.transferShape === 'upload')
        return {
          code: 'transfer-tail-lost',
          summary: `The ${on(r)} upload of ${size(t.bytes)} ended with ${r.exitCode === null ? 'no exit status' : `exit status ${r.exitCode}`} but ${t.receivedBytes ? `the pod counted only ${t.receivedBytes} bytes: the last ${t.lostTailBytes} never reached it` : "without the pod's count of what arrived: its output was lost with the exit"}.`,
          check: t.receivedBytes
            ? "Bytes written into the pod were lost on the way: `kubectl cp file pod:` leaves a short or corrupt file. Check the kubelet and container runtime versions of the target node, and compare the other transport's row."
            : `The exit status overtook the pod's last output, the tail truncation that makes \`kubectl cp\` from the pod fail (${KUBECTL_ON_LOST_TAIL}); an upload itself writes nothing back, so \`kubectl cp file pod:\` is not hit by it, but this path loses output tails: see the download row.`,
        };
      return {
        code: 'transfer-tail-lost',
        summary: `The ${on(r)} transfer of ${size(t.bytes)} ended with ${r.exitCode === null ? 'no exit status' : `exit status ${r.exitCode}`} before its last ${t.lostTailBytes} bytes came back: ${moved}.`,
        check: `On this path a \`kubectl cp\` loses data: ${KUBECTL_ON_LOST_TAIL}. The exit status overtaking the last output is the field's tail truncation (kubernetes#60140, #124571, knoppiks/k8s-exec-truncation-repro): check the kubelet and container runtime versions of the target's node, and compare the other transport's row (it is not a hop when both lose the tail).`,
      };
    case 'stalled':
      return {
        code: 'transfer-stalled',
        summary: `The ${on(r)} transfer of ${size(t.bytes)} stalled: no byte came back for ${t.longestStallSeconds} s after ${t.receivedBytes} bytes (${t.sentBytes} sent).`,
        check: `Something on the path holds the upgraded stream: a hop that buffers it (nginx \`proxy_buffering\` / \`proxy_request_buffering\`, a WAF inspecting bodies) or a size limit (a stall at the same byte count on every run is a buffer or body limit of that size), else a stuck kubelet or runtime. kubectl waits without a message in this case: a \`kubectl cp\` hangs.`,
      };
    case 'ended':
      return {
        code: 'transfer-cut',
        summary: `The ${on(r)} connection ended in the middle of the ${size(t.bytes)} transfer: ${moved}.`,
        check:
          'A hop cut the stream under load: a body or connection byte limit, a maximum connection duration, or a proxy that drops long upgraded streams. kubectl reports a lost connection (port-forward) or "unexpected EOF" (`kubectl cp`).',
      };
    case 'timeout':
      return {
        code: 'transfer-slow',
        summary: `The ${on(r)} transfer of ${size(t.bytes)} did not finish in time: ${moved}, ${t.mibPerSecond} MiB/s.`,
        check:
          'The path rate-limits or throttles upgraded streams (a proxy `limit_rate`, a bandwidth policy, a congested NAT or VPN). `kubectl cp` of large files will take as long, or time out in the tools that wrap it.',
      };
  }
}

/** Both transports completed, one far slower: a hop treats them differently (a rate limit on one upgrade kind). */
export function transferRateGap(spdy: SessionResult | undefined, ws: SessionResult | undefined): Diagnosis | undefined {
  const a = spdy?.transfer;
  const b = ws?.transfer;
  if (!a || !b || a.end !== 'complete' || b.end !== 'complete' || a.mibPerSecond <= 0 || b.mibPerSecond <= 0) return undefined;
  const [slow, fast] = a.mibPerSecond < b.mibPerSecond ? [spdy!, ws!] : [ws!, spdy!];
  const ratio = fast.transfer!.mibPerSecond / slow.transfer!.mibPerSecond;
  if (ratio < SLOW_RATIO || slow.transfer!.seconds < RATE_GAP_MIN_SECONDS) return undefined;
  return {
    code: 'transfer-slow',
    summary: `${on(slow)} moved ${size(slow.transfer!.bytes)} at ${slow.transfer!.mibPerSecond} MiB/s, ${Math.round(ratio)}× slower than ${TRANSPORT_WORDS[fast.transport]} (${fast.transfer!.mibPerSecond} MiB/s) on the same path.`,
    check: `A hop handles the two upgrades differently (a rate limit, buffering or inspection on one of them). kubectl 1.31+ uses WebSocket: \`kubectl cp\` runs at the WebSocket rate.`,
  };
}
