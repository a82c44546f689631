/** The emulator's fault switches, observed through our client on loopback. */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmulatorOptions } from '../../lab/emulator/options.js';
import { openExec, openPortForward } from '../../src/streaming/index.js';
import type { Transport } from '../../src/streaming/types.js';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';

const target = { namespace: 'default', pod: 'probe-target', container: 'main' };
let lab: EmulatorWithKubeconfig | undefined;
afterEach(async () => {
  await lab?.stop();
  lab = undefined;
});
async function start(o: EmulatorOptions) {
  lab = await startEmulatorWithKubeconfig(o);
  return { server: lab.emulator.url, upgradeTimeoutMs: 1500 };
}

describe('idle cut', () => {
  for (const mode of ['fin', 'rst'] as const) {
    for (const transport of ['websocket', 'spdy'] as Transport[]) {
      it(`cuts an idle ${transport} exec after 1 s with ${mode.toUpperCase()}`, async () => {
        const cfg = await start({ faults: { idleCutSeconds: 1, idleCutMode: mode } });
        const s = await openExec(transport, cfg, { ...target, command: ['cat'], stdin: true, keepalive: 'none' });
        const end = await s.ended;
        const seconds = (end.atMs - s.timing.at101) / 1000;
        expect(end.cause).toBe(mode);
        expect(seconds).toBeGreaterThan(0.9);
        expect(seconds).toBeLessThan(1.6);
        expect(await s.exit).toMatchObject({ exitCode: undefined });
      });
    }
  }

  it('activity keeps a session alive past the idle cut', async () => {
    const cfg = await start({ faults: { idleCutSeconds: 1 } });
    const pf = await openPortForward('spdy', cfg, { ...target, keepalive: 'none' });
    const conn = await pf.openConnection(8080);
    for (let i = 0; i < 4; i++) {
      conn.stream.write('tick');
      await new Promise((r) => conn.stream.once('data', r));
      await new Promise((r) => setTimeout(r, 500));
    }
    // 2 s of traffic through a 1 s idle cut: the session must still be open.
    const state = await Promise.race([pf.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('alive'), 100))]);
    expect(state).toBe('alive');
    pf.close();
  });
});

describe('RBAC before and after 1.35', () => {
  it('1.35 with only create: WebSocket (GET) is refused 403, SPDY (POST) works', async () => {
    const cfg = await start({ rbac: { model: '1.35', verbs: ['create'] } });
    await expect(openExec('websocket', cfg, { ...target, command: ['true'] })).rejects.toMatchObject({
      code: 'UPGRADE_REJECTED',
      context: { status: 403, kubeStatus: { reason: 'Forbidden' } },
    });
    const s = await openExec('spdy', cfg, { ...target, command: ['true'] });
    expect(await s.exit).toMatchObject({ exitCode: 0 });
    s.close();
  });

  it('1.35 with only get: WebSocket needs create too', async () => {
    const cfg = await start({ rbac: { model: '1.35', verbs: ['get'] } });
    const err = openExec('websocket', cfg, { ...target, command: ['true'] });
    await expect(err).rejects.toMatchObject({ context: { status: 403 } });
    // kube-apiserver's own words for the 1.35 check (subresources.go ensureAuthorizedForVerb): no user, no verb.
    await expect(err).rejects.toThrow(/pods "probe-target" is forbidden: $/);
  });

  it('before 1.35 get alone is enough for WebSocket, and SPDY needs create', async () => {
    const cfg = await start({ rbac: { model: 'pre-1.35', verbs: ['get'] } });
    const s = await openExec('websocket', cfg, { ...target, command: ['true'] });
    expect(await s.exit).toMatchObject({ exitCode: 0 });
    await expect(openPortForward('spdy', cfg, target)).rejects.toMatchObject({ context: { status: 403 } });
  });
});

describe('upgrade faults', () => {
  it('rejectSpdy answers the POST with a Status, WebSocket still works', async () => {
    const cfg = await start({ faults: { rejectSpdy: 400 } });
    await expect(openPortForward('spdy', cfg, target)).rejects.toMatchObject({
      code: 'UPGRADE_REJECTED',
      context: { status: 400, kubeStatus: { reason: 'BadRequest' } },
    });
    const pf = await openPortForward('websocket', cfg, target);
    pf.close();
  });

  it('noUpgradeAnswer never writes a 101: UPGRADE_TIMEOUT', async () => {
    const cfg = await start({ faults: { noUpgradeAnswer: true } });
    await expect(openExec('websocket', cfg, { ...target, command: ['true'] })).rejects.toMatchObject({ code: 'UPGRADE_TIMEOUT' });
    expect(lab!.emulator.upgrades.at(-1)!.status).toBe(-1);
  });

  it('upgradeDelayMs shows up in the measured handshake, and agrees with the emulator clock', async () => {
    const cfg = await start({ faults: { upgradeDelayMs: 300 } });
    const s = await openExec('spdy', cfg, { ...target, command: ['true'] });
    expect(s.timing.handshakeMs).toBeGreaterThanOrEqual(295);
    // Same process, same clock: the moment we parsed the 101 (at101) is just after the emulator wrote it. (Not
    // a time taken before openExec plus handshakeMs: that clock starts at the dial, after the call's own setup,
    // and is rounded, so it read 0.3 ms before the write on a loaded machine.)
    const wrote = lab!.emulator.upgrades.at(-1)!.wrote101At!;
    expect(s.timing.at101).toBeGreaterThanOrEqual(wrote);
    expect(s.timing.at101 - wrote).toBeLessThan(50);
    s.close();
  });
});
