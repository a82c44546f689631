/**
 * The hostile-server suite (issue 57): the CLI, in a process of its own (test/helpers/cli-child.ts), against a hostile
 * API server of ours (test/helpers/hostile-api.ts), one attack at a time. For each attack and each medium (the table
 * with -v, JSON, HTML): the run ends classified (never exit 2, never killed) within twice its plan's budget; the
 * process's peak RSS (the kernel's VmHWM) stays under 400 MiB; the report is written and small; no piece of 12
 * characters of the token is in any output; no raw control byte reaches the terminal. Then what each attack must have
 * been called. Generous bounds, not benchmarks (those live in `npm run bench`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChildResult, Medium } from '../helpers/cli-child.js';
import { HOSTILE_TOKEN, hostileServer, type Attack } from '../helpers/hostile-api.js';

const dir = mkdtempSync(join(tmpdir(), 'ksp-hostile-cli-'));
const MiB = 1024 * 1024;

interface Result {
  readonly [key: string]: unknown;
  readonly ok: boolean;
  readonly error: string | null;
  readonly errorCode: string | null;
  readonly holdSeconds: number;
  readonly upgrade: { readonly status: number; readonly errorCode?: string | null };
}
interface Report {
  readonly results: Result[];
  readonly verdicts: Array<{ verdict: string; diagnosis: Array<{ code: string; summary: string; check: string }> }>;
  readonly server: { readonly versionError?: string };
  readonly target: { readonly pod: string | null };
}
interface Outcome {
  readonly codes: Record<Medium, number>;
  readonly seconds: Record<Medium, number>;
  readonly peakRssMiB: Record<Medium, number>;
  readonly out: Record<Medium, string>;
  readonly err: Record<Medium, string>;
  readonly report: Report;
}

/** How an attack is run: the CLI's flags past the kubeconfig, and the plan's budget in seconds. */
interface Plan {
  readonly args: readonly string[];
  readonly budgetSeconds: number;
  /** The three media at once, sharing one peak (attacks that cost time, not memory: the REST trickles). */
  readonly atOnce?: boolean;
}

const TIMEOUTS = ['--upgrade-timeout', '5000', '--echo-timeout', '3000', '--follow-up-budget', '0s', '--keepalive', 'kubectl'];
/**
 * The plan's budget: the REST phase's deadlines (the target's GET or list 10 s, /version 5 s, in parallel), an upgrade
 * (5 s), two echoes (3 s each), the hold, and the exit status and close (5 s).
 */
const budget = (holdSeconds: number) => 10 + 5 + 2 * 3 + holdSeconds + 5;
const plan = (ops: string, transports: string, holdSeconds = 0, pod: string | null = 'p'): Plan => ({
  args: [...(pod ? ['--pod', pod] : []), '--ops', ops, '--transports', transports, '--hold', `${holdSeconds}s`, ...TIMEOUTS],
  budgetSeconds: budget(holdSeconds),
});

async function attack(name: Attack, p: Plan): Promise<Outcome> {
  const server = await hostileServer(name, dir);
  const out = join(dir, name);
  mkdirSync(out, { recursive: true });
  const resultFile = join(out, 'result.json');
  try {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', 'test/helpers/cli-child.ts', resultFile, out, 'run', '--kubeconfig', server.kubeconfig, ...p.args],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { PATH: process.env.PATH, HOME: '/nonexistent', TMPDIR: process.env.TMPDIR, ...(p.atOnce ? { KSP_MEDIA_AT_ONCE: '1' } : {}) },
      },
    );
    let childErr = '';
    child.stderr.on('data', (d) => (childErr += d));
    // Killed past the three runs' budgets and more: a run that never ends fails here, named, not hanging the suite.
    const killer = setTimeout(() => child.kill('SIGKILL'), 4 * 3 * p.budgetSeconds * 1000);
    const exit = await new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    clearTimeout(killer);
    expect(exit, `the CLI process for ${name} did not end by itself: ${childErr.slice(0, 2000)}`).toBe(0);
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as ChildResult;
    const by = <T>(f: (r: ChildResult['runs'][number]) => T) => Object.fromEntries(result.runs.map((r) => [r.medium, f(r)])) as Record<Medium, T>;
    const outputs = by((r) => readFileSync(r.stdout, 'utf8'));
    return {
      codes: by((r) => r.code),
      seconds: by((r) => r.seconds),
      peakRssMiB: by((r) => r.peakRssMiB),
      out: outputs,
      err: by((r) => readFileSync(r.stderr, 'utf8')),
      report: JSON.parse(outputs.json) as Report,
    };
  } finally {
    await server.close();
  }
}

/** Every 12-character piece of the token, case-insensitively: none may be printed anywhere. */
function tokenPieces(text: string): string[] {
  const lower = text.toLowerCase();
  const found: string[] = [];
  for (let i = 0; i + 12 <= HOSTILE_TOKEN.length; i++)
    if (lower.includes(HOSTILE_TOKEN.slice(i, i + 12).toLowerCase())) found.push(HOSTILE_TOKEN.slice(i, i + 12));
  return found;
}

// C0 but newline and tab, DEL, C1: what terminalSafe shows as \xHH.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** What holds for every attack: classified, in time, in memory, written, small, no token piece, no raw control byte. */
function expectContained(name: Attack, o: Outcome, p: Plan): void {
  const round = (r: Record<Medium, number>) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v * 10) / 10])));
  const summary = `${name}: exit ${JSON.stringify(o.codes)}, ${round(o.seconds)} s, peak ${round(o.peakRssMiB)} MiB`;
  // The figures, in the log of every run (the bounds below are generous; these say how far from them it was).
  console.info(
    `hostile ${summary}; output ${o.out.json.length} B json, ${o.out.html.length} B html, ${o.out.table.length + o.err.table.length} B table+stderr`,
  );
  for (const medium of ['table', 'json', 'html'] as const) {
    expect([0, 1, 3], `${summary}; ${medium} stderr: ${o.err[medium].slice(0, 500)}`).toContain(o.codes[medium]);
    expect(o.seconds[medium], summary).toBeLessThan(2 * p.budgetSeconds);
    expect(o.peakRssMiB[medium], summary).toBeLessThan(400);
    expect(tokenPieces(o.out[medium] + o.err[medium]), `${name}: ${medium}`).toEqual([]);
  }
  expect(o.out.json.length, summary).toBeLessThan(512 * 1024);
  expect(o.out.html, summary).toMatch(/^<!doctype html>/i);
  expect(o.out.html.length, summary).toBeLessThan(1024 * 1024);
  expect(o.out.table.length + o.err.table.length, summary).toBeLessThan(256 * 1024);
  expect(RAW_CONTROL.exec(o.out.table)?.[0], `${name}: a raw control byte in the table`).toBeUndefined();
  expect(RAW_CONTROL.exec(o.err.table)?.[0], `${name}: a raw control byte in the -v wire log`).toBeUndefined();
}

const codes = (o: Outcome) => o.report.results.map((r) => r.errorCode ?? r.upgrade.errorCode ?? null);

describe('the CLI against a hostile API server, in a process of its own (issue 57)', () => {
  it('§1 exec’s stderr flooded with 256 MiB during a 2 s hold: the session works, the bytes counted, not kept', async () => {
    const p = plan('exec', 'websocket', 2);
    const o = await attack('stderr-flood', p);
    expectContained('stderr-flood', o, p);
    const held = o.report.results.find((r) => r.holdSeconds === 2)!;
    expect(held.ok, held.error ?? '').toBe(true);
    expect(held.stderrBytes).toBeGreaterThanOrEqual(200 * MiB);
  }, 180_000);

  it('§1 200 streams the server opens, then 400 MiB of DATA on them during a 2 s hold: refused, counted, never buffered', async () => {
    const p = plan('exec', 'spdy', 2);
    const o = await attack('pushed-streams', p);
    expectContained('pushed-streams', o, p);
    const held = o.report.results.find((r) => r.holdSeconds === 2)!;
    expect(held.ok, held.error ?? '').toBe(true);
    expect(held.streamsRefused).toBe(200);
  }, 180_000);

  it('§7 10,000 streams the server opens before replying to ours: they never count against our own 256', async () => {
    const p = plan('exec', 'spdy');
    const o = await attack('syn-flood', p);
    expectContained('syn-flood', o, p);
    expect(o.report.results[0]!.ok, o.report.results[0]!.error ?? '').toBe(true);
    expect(o.report.results[0]!.streamsRefused).toBe(10_000);
  }, 180_000);

  it('§2 SPDY PINGs, our echoes never read: PEER_NOT_READING, in time and in memory', async () => {
    const p = plan('exec', 'spdy');
    const o = await attack('spdy-ping-unread', p);
    expectContained('spdy-ping-unread', o, p);
    expect(codes(o)).toEqual(['PEER_NOT_READING']);
  }, 180_000);

  it('§2 WebSocket pings, our pongs never read: PEER_NOT_READING, in time and in memory', async () => {
    const p = plan('exec', 'websocket');
    const o = await attack('ws-ping-unread', p);
    expectContained('ws-ping-unread', o, p);
    // Cut during the first echo: the echo's failure, naming the cut's cause.
    expect(codes(o)).toEqual(['ECHO_CONNECTION_ENDED']);
    expect(o.report.results[0]!.error).toMatch(/\(protocol-error: the peer kept sending pings and stopped reading: 1,0\d\d,\d{3} bytes of our replies/);
  }, 180_000);

  for (const [name, transport] of [
    ['status-50mb-ws', 'websocket'],
    ['status-50mb-spdy', 'spdy'],
  ] as const) {
    it(`§3 a 50 MB Failure status on exec’s error stream (${transport}): failed, classified, small in every medium`, async () => {
      const p = plan('exec', transport);
      const o = await attack(name, p);
      expectContained(name, o, p);
      const r = o.report.results[0]!;
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/more than the 65,536 bytes a status may take; it began "(\{"kind":"Status"|x{120})/);
      expect(r.error!.length).toBeLessThan(1024);
    }, 180_000);
  }

  it('§3 a 50 MB error text on a port-forward’s error stream: failed, classified, small in every medium', async () => {
    const p = plan('portforward', 'spdy');
    const o = await attack('pf-error-50mb', p);
    expectContained('pf-error-50mb', o, p);
    const r = o.report.results[0]!;
    expect(r.ok).toBe(false);
    expect(r.error!.length).toBeLessThan(5000);
  }, 180_000);

  it('§7 a pod list over 16 MiB: not measured (exit 3) with target-unlisted, never a guessed pod', async () => {
    const p = plan('exec', 'websocket', 0, null);
    const o = await attack('list-16mib', p);
    expectContained('list-16mib', o, p);
    expect(o.codes).toEqual({ table: 3, json: 3, html: 3 });
    expect(o.report.target.pod).toBeNull();
    expect(o.report.results).toEqual([]);
    expect(o.report.verdicts[0]!.diagnosis[0]).toMatchObject({ code: 'target-unlisted', summary: expect.stringContaining('more than 16 MiB') });
  }, 180_000);

  it('§7 250,000 Pending pods: target-missing counts them and names the first ten, in one short line', async () => {
    const p = plan('exec', 'websocket', 0, null);
    const o = await attack('pending-250k', p);
    expectContained('pending-250k', o, p);
    expect(o.codes.json).toBe(3);
    const summary = o.report.verdicts[0]!.diagnosis[0]!.summary;
    expect(summary).toContain('(250,000 found, 250,000 Pending; the first 10: p0 Pending, p1 Pending,');
    expect(summary.length).toBeLessThan(400);
  }, 180_000);
});

// Attacks that cost waiting (REST deadlines, echo timeouts), not CPU or memory: run side by side, each CLI in its own
// process (its peak its own).
describe.concurrent('the CLI against a hostile API server, the attacks that wait (issue 57)', () => {
  it('§4 /version trickled a byte every 500 ms: REST_DEADLINE at 5 s, the run still ends and classifies', async () => {
    const p = { ...plan('exec', 'websocket'), atOnce: true };
    const o = await attack('version-trickle', p);
    expectContained('version-trickle', o, p);
    expect(o.report.server.versionError).toBe('GET /version?timeout=32s: not answered in full within 5000 ms');
    expect(o.report.results.map((r) => r.upgrade.status)).toEqual([403]);
  }, 180_000);

  it('§4 the target’s GET trickled: it gives up at its deadline and the sessions still run and say what they met', async () => {
    const p = { ...plan('exec', 'websocket'), atOnce: true };
    const o = await attack('pod-trickle', p);
    expectContained('pod-trickle', o, p);
    expect(o.report.results.map((r) => r.upgrade.status)).toEqual([403]);
  }, 180_000);

  it('§5 the token across every cut (Server, Via, a refusal body, a non-JSON status, a wrong echo, a header’s name): no piece printed', async () => {
    // A wrong echo is known at its echo timeout: 1 s here.
    const p = { ...plan('exec,portforward', 'websocket,spdy'), args: [...plan('exec,portforward', 'websocket,spdy').args, '--echo-timeout', '1000'] };
    const o = await attack('token-pieces', p);
    expectContained('token-pieces', o, p); // no 12-character piece anywhere
    // The texts around the token are there, so the check above is of text that was shown, cut where the token stood.
    const all = Object.values(o.out).join('') + Object.values(o.err).join('');
    expect(all).toMatch(/s{40}/); // Server
    expect(all).toMatch(/v{40}/); // Via
    expect(all).toMatch(/b{40}/); // the refusal body
    expect(o.out.json).toMatch(/n{40}/); // the non-JSON status
    expect(o.out.json).toMatch(/w{20}/); // the wrong echo
    expect(o.err.table).toMatch(/< HTTP\/1\.1 502 Bad Gateway/); // -v showed the refusal and its headers
  }, 180_000);

  it('§6 a status message that clears the screen, retitles it and paints a forged row: shown escaped, never raw', async () => {
    const p = plan('exec', 'websocket');
    const o = await attack('terminal-escapes', p);
    expectContained('terminal-escapes', o, p);
    expect(o.out.table).toContain('\\x1b[2J\\x1b[H\\x1b]0;all clear\\x07');
    expect(o.report.results[0]!.error).toContain('\u001b[2J');
  }, 180_000);
});
