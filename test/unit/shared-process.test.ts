/**
 * Attach's sessions share the container's one process (shared-process.ts): the runner holds them one length after
 * another, each length's holds starting together; a run with attach lasts the sum of its holds, and every budget
 * (parsePlan's limits, the Lambda's fit) counts it so.
 */
import { describe, expect, it } from 'vitest';
import { Checker } from '../../src/config/checker.js';
import { PLAN_NAMES, parsePlan } from '../../src/config/plan.js';
import { fitToBudget } from '../../src/lambda/run-budget.js';
import { lambdaSessionMs } from '../../src/config/lambda-limits.js';
import { runSessions } from '../../src/probe/runner.js';
import { HoldBarrier, quietOperation } from '../../src/probe/shared-process.js';
import type { SessionResult, SessionSpec } from '../../src/probe/types.js';
import { holdSpan, MAX_HOLD_SECONDS } from '../../src/vocabulary.js';

const spec = (operation: SessionSpec['operation'], holdSeconds: number, transport: SessionSpec['transport'] = 'spdy'): SessionSpec => ({
  operation,
  transport,
  keepalive: 'none',
  holdSeconds,
});
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('runSessions', () => {
  it('holds attach one length after another, shortest first, each length together; exec and port-forward at once beside them', async () => {
    const specs = [spec('attach', 6), spec('exec', 6), spec('attach', 0), spec('attach', 3), spec('attach', 3, 'websocket'), spec('portforward', 3)];
    const log: string[] = [];
    const out = await runSessions(specs, async (s, turn) => {
      const name = `${s.operation} ${s.holdSeconds}s ${s.transport}`;
      log.push(`start ${name}${turn ? ' (turn)' : ''}`);
      await tick();
      turn?.arrive();
      await turn?.ready;
      await tick();
      log.push(`end ${name}`);
      return { ...s } as SessionResult;
    });
    expect(out.map((r) => `${r.operation} ${r.holdSeconds}`)).toEqual(specs.map((s) => `${s.operation} ${s.holdSeconds}`));
    const at = (e: string) => log.indexOf(e);
    // exec and port-forward start at once with the first attach group.
    expect(log.slice(0, 3).sort()).toEqual(['start attach 0s spdy (turn)', 'start exec 6s spdy', 'start portforward 3s spdy']);
    // 0 s, then 3 s (both transports together), then 6 s.
    expect(at('start attach 3s spdy (turn)')).toBeGreaterThan(at('end attach 0s spdy'));
    expect(at('start attach 3s websocket (turn)')).toBeLessThan(at('end attach 3s spdy'));
    expect(at('start attach 6s spdy (turn)')).toBeGreaterThan(Math.max(at('end attach 3s spdy'), at('end attach 3s websocket')));
  });

  it('a session that ends without arriving (its deadline, an error) does not keep its group waiting', async () => {
    const specs = [spec('attach', 3), spec('attach', 3, 'websocket')];
    const out = await runSessions(specs, async (s, turn) => {
      // The SPDY session's start never ends on its own: it is given up at its deadline, without arriving.
      if (s.transport === 'spdy') return { ...s, ok: false, errorCode: 'DEADLINE' } as SessionResult;
      turn?.arrive();
      await turn?.ready;
      return { ...s, ok: true } as SessionResult;
    });
    expect(out.map((r) => `${r.transport} ${r.ok}`)).toEqual(['spdy false', 'websocket true']);
  });
});

describe('HoldBarrier', () => {
  it('releases when every party has arrived, once each', async () => {
    const b = new HoldBarrier(2);
    const [x, y] = [b.turn(), b.turn()];
    let released = false;
    void x.ready.then(() => (released = true));
    x.arrive();
    x.arrive();
    await tick();
    expect(released).toBe(false);
    y.arrive();
    await tick();
    expect(released).toBe(true);
  });
});

describe('a run with attach lasts the sum of its holds', () => {
  const parse = (raw: Record<string, unknown>, holdRule?: (s: number) => string | undefined) =>
    parsePlan({ checker: new Checker('flags'), names: PLAN_NAMES.flags, commaLists: true, ...(holdRule ? { holdRule } : {}) }, raw);
  it('holdSpan: the longest hold without attach, the sum of the distinct holds with it', () => {
    expect(holdSpan({ operations: ['exec', 'portforward'], holdsSeconds: [0, 65, 350] })).toBe(350);
    expect(holdSpan({ operations: ['exec', 'attach'], holdsSeconds: [0, 65, 350] })).toBe(415);
  });
  it('parsePlan refuses attach holds whose sum exceeds what any runner (or this entry point) accepts, saying why', () => {
    expect(() => parse({ operations: 'attach', holds: `${MAX_HOLD_SECONDS}s,60s` })).toThrow(
      /--hold with attach the holds run one after another \(the attach sessions share the container's one process\), 21660 s in all: longer than the longest hold any runner accepts \(6 h\)/,
    );
    expect(() => parse({ operations: 'attach', holds: '600s,600s,700s' }, (s) => (s > 1200 ? 'longer than 1200 s' : undefined))).toThrow(
      /1300 s in all: longer than 1200 s/,
    );
    expect(parse({ operations: 'exec', holds: '600s,700s' }, (s) => (s > 1200 ? 'longer than 1200 s' : undefined)).holdsSeconds).toEqual([600, 700]);
  });
  it("the Lambda's budget fits attach holds one after another: a hold that fits alone but not behind the shorter ones is refused", () => {
    const budget = lambdaSessionMs(300) + 1000;
    const exec = fitToBudget({ operations: ['exec'], transports: ['spdy'], keepalives: ['none'], holdsSeconds: [60, 300] }, budget);
    expect(exec.plan.holdsSeconds).toEqual([60, 300]);
    const attach = fitToBudget({ operations: ['attach'], transports: ['spdy'], keepalives: ['none'], holdsSeconds: [60, 300] }, budget);
    expect(attach.plan.holdsSeconds).toEqual([60]);
    expect(attach.refused[0]!.reason).toMatch(
      /^a 300s hold needs up to \d+s with handshakes and echoes, behind the shorter attach holds \(\d+s of it\); only \d+s are left/,
    );
  });
  it('follow-up sessions that need a quiet connection run attach as exec', () => {
    expect([quietOperation('attach'), quietOperation('exec'), quietOperation('portforward')]).toEqual(['exec', 'exec', 'portforward']);
  });
});
