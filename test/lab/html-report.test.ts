/**
 * The HTML report, rendered by real Chromium (Debian's, headless, through
 * playwright-core): the demo's report and a run whose holds a hop cuts. The
 * page's parts are there, it loads nothing from the network, the timeline's
 * idle-timeout markers sit where 30 s and 60 s are, and a screenshot shows
 * the bars in their colours (decoded here, pixel by pixel).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorWithKubeconfig, type EmulatorWithKubeconfig } from '../../lab/emulator/kubeconfig.js';
import { cli } from '../helpers/cli.js';
import { emulatorKubeconfig } from '../../lab/emulator/kubeconfig.js';
import type { RealHop } from '../../lab/real-hops/process-hop.js';
import { startNginx } from '../../lab/real-hops/reverse-proxies.js';
import { requireHop } from '../helpers/hops.js';
import { writeFileSync } from 'node:fs';
import { countColour, decodePng } from '../helpers/png.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), '.tmp', 'html-report');
let dir: string;
let profile: string;
let browser: BrowserContext;
let lab: EmulatorWithKubeconfig;
const requests: string[] = [];

beforeAll(async () => {
  // Fail, never skip: the browser check is part of what "done" means (.ci/run installs chromium).
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  dir = mkdtempSync(join(tmpdir(), 'ksp-html-'));
  profile = mkdtempSync(join(tmpdir(), 'ksp-chromium-profile-'));
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 900 },
  });
  lab = await startEmulatorWithKubeconfig({ tls: true, faults: { idleCutSeconds: 3 } });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
});

async function open(path: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('request', (r) => {
    if (!r.url().startsWith('file://')) requests.push(r.url());
  });
  await page.goto(`file://${path}`);
  return page;
}

describe('the HTML report in Chromium', () => {
  it('the demo: one section per path, verdicts, kubectl per version, timelines, latency, diagnoses; nothing fetched', async () => {
    const path = join(dir, 'demo.html');
    const r = await cli(['demo', '-o', 'html', '--out', path]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/report written to .*demo\.html \(\d+ bytes\)/);
    const page = await open(path);
    expect(await page.title()).toBe('kube-stream-probe report');
    const sections = page.locator('section.report');
    expect(await sections.count()).toBeGreaterThanOrEqual(5);
    expect(await page.locator('section.report h2').first().textContent()).toMatch(/^direct: /);
    // Verdicts, with the broken ones marked, and the kubectl matrix with all four clients.
    expect(await page.locator('table.verdicts tbody tr[data-verdict="websocket-broken"]').count()).toBeGreaterThan(0);
    expect(await page.locator('table.verdicts td.bad').first().isVisible()).toBe(true);
    expect(await page.locator('table.kubectl').first().locator('thead th').allTextContents()).toEqual([
      'operation',
      'hold',
      'kubectl ≤1.29',
      'kubectl 1.30',
      'kubectl 1.31–1.37',
      'kubectl 1.38 (GA)',
      'WebSocket-only clients',
    ]);
    expect(await page.locator('table.kubectl td.warn').count()).toBeGreaterThan(0); // works only through the fallback somewhere
    // Timelines and latency plots, drawn.
    expect(await page.locator('svg.timeline g.session').count()).toBeGreaterThan(10);
    expect(await page.locator('svg.latency g.latency').count()).toBeGreaterThan(10);
    // Diagnoses with what to check next.
    expect(await page.locator('.meeting li[data-code="hop-refused-upgrade"] .fix').first().textContent()).toMatch(/^Fix: /);
    expect(await page.locator('p.summary.bad').textContent()).toContain('A broken path was found');
    await page.screenshot({ path: join(ARTIFACTS, 'demo.png'), fullPage: true });
    expect(requests).toEqual([]);
    await page.close();
  }, 90_000);

  it('a run whose sessions a hop cuts after 3 s idle: the cut drawn against the 30 / 60 s markers, server and RBAC shown, and the screenshot has the bars', async () => {
    const path = join(dir, 'run.html');
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--hold', '0s,5s', '--keepalive', 'kubectl', '-o', 'html', '--out', path]);
    expect(r.code, r.stderr).toBe(1); // the cut is a broken path
    expect(readFileSync(path, 'utf8')).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)[a-z]/i); // no script, no remote reference
    const page = await open(path);
    expect(await page.locator('dl.server dd').first().textContent()).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await page.locator('table.rbac tbody tr').count()).toBe(3);
    const sessions = page.locator('svg.timeline g.session');
    expect(await sessions.count()).toBe(4);
    expect(await sessions.first().locator('title').textContent()).toMatch(/lost at [23]\.\d s/);
    // The markers: 30 s and 60 s where they belong on the axis (0 at the bars' left edge).
    const marks = page.locator('svg.timeline line.mark');
    expect(await page.locator('svg.timeline text.marklabel').allTextContents()).toEqual(['0 s', '30 s', '60 s']);
    const [m30, m60] = [await marks.nth(0).boundingBox(), await marks.nth(1).boundingBox()];
    const bar = await sessions.first().locator('rect.bad').boundingBox();
    expect((m60!.x - bar!.x) / (m30!.x - bar!.x)).toBeCloseTo(2, 1);
    // Pixels: red bars (cut sessions) and the red dashed markers, in the timeline's own screenshot.
    const png = await page.locator('svg.timeline').screenshot({ path: join(ARTIFACTS, 'run-timeline.png') });
    const img = decodePng(png);
    expect(img.width).toBeGreaterThan(700);
    expect(countColour(img, '#ea4335')).toBeGreaterThan(200); // bars of lost sessions
    expect(countColour(img, '#d62728', 12)).toBeGreaterThan(20); // the marker lines
    await page.screenshot({ path: join(ARTIFACTS, 'run.png'), fullPage: true });
    expect(requests).toEqual([]);
    await page.close();
  }, 60_000);
});

/** The text of every element whose box starts in the page's first `px` pixels (what the meeting sees first). */
async function firstScreen(page: Page, px = 800): Promise<string> {
  return page.evaluate((limit) => {
    // The page's DOM (this runs in Chromium; the test's TypeScript has no DOM types).
    const doc = (globalThis as any).document;
    const out: string[] = [];
    const walker = doc.createTreeWalker(doc.body, (globalThis as any).NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const range = doc.createRange();
      range.selectNodeContents(n);
      const box = range.getBoundingClientRect();
      if (box.height > 0 && box.top < limit) out.push(n.textContent ?? '');
    }
    return out.join(' ').replace(/\s+/g, ' ');
  }, px);
}

describe('the first screen opens the upgrade meeting', () => {
  let plain: EmulatorWithKubeconfig;
  const hops: RealHop[] = [];
  beforeAll(async () => {
    plain = await startEmulatorWithKubeconfig({});
  });
  afterAll(async () => {
    await Promise.all(hops.map((h) => h.stop()));
    await plain?.stop();
  });
  const through = async (variant: Parameters<typeof startNginx>[0], args: string[], name: string) => {
    const hop = (await requireHop(() => startNginx(variant, Number(plain.emulator.url.port))))!;
    hops.push(hop);
    const kubeconfig = join(dir, `${name}.yaml`);
    writeFileSync(kubeconfig, emulatorKubeconfig(plain.emulator, { server: `http://127.0.0.1:${hop.port}` }));
    const path = join(dir, `${name}.html`);
    const r = await cli(['run', '--kubeconfig', kubeconfig, '--no-preflight', '-o', 'html', '--out', path, ...args]);
    expect(r.code, r.stderr).toBe(1);
    const page = await open(path);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-first-screen.png`) });
    return { page, text: await firstScreen(page) };
  };

  it("nginx's idle timeout (proxy_read_timeout, scaled to 7 s): the hop, that no-ping clients break while kubectl's pings hold it, and the fix, in the first 800 px", async () => {
    const { page, text } = await through(
      { kind: 'upgrade-ok', readTimeoutSeconds: 7 },
      ['--hold', '9s', '--keepalive', 'kubectl,none', '--ops', 'exec', '--fail-on', 'any'],
      'nginx-idle',
    );
    // What breaks (the cut, its timeout), for whom (no-ping clients; kubectl's pings hold it), the hop and its setting.
    expect(text).toMatch(/For the upgrade meeting .* The WebSocket exec session was cut after [67]\.\d s with no byte moving/);
    expect(text).toContain(
      "It breaks for clients that send no pings: SDK clients and browser terminals (WebSocket-only); kubectl's own pings keep it open here",
    );
    expect(text).toMatch(/Fix: A hop .* idle timeout of about 7 s\..* the first suspect: nginx \(Server: nginx\/[\d.]+\): proxy_read_timeout/);
    await page.close();
  }, 90_000);

  it('nginx refusing WebSocket: the hop named, who breaks from which kubectl, and the fix, in the first 800 px', async () => {
    const { page, text } = await through({ kind: 'refuse-websocket' }, ['--hold', '0s'], 'nginx-refuse');
    // One hop, one rule: one finding with both operations' rows, not one per operation.
    expect(text).toContain('A broken path was found: one finding below');
    expect(text).toMatch(/For the upgrade meeting .*WebSocket's upgrade was refused with 403 by nginx \(Server: nginx\/[\d.]+\)/);
    expect(text).toContain(
      'exec: it breaks for WebSocket-only clients (SDKs, browser terminals); works only through the SPDY fallback for kubectl 1.30, kubectl 1.31–1.37, kubectl 1.38 (GA); works for kubectl ≤1.29. port-forward: it breaks for WebSocket-only clients (SDKs, browser terminals); works only through the SPDY fallback for kubectl 1.31–1.37, kubectl 1.38 (GA); works for kubectl ≤1.29, kubectl 1.30.',
    );
    expect(text).toContain('(exec 0s; port-forward 0s)');
    expect(text).toMatch(/Fix: A rule refuses WebSocket upgrades .* allow them for pods\/exec, pods\/attach and pods\/portforward\..* limit_except/);
    // Markdown rendered: the diagnoses' `code` is <code>, never a literal backtick.
    expect(await page.locator('.meeting li code', { hasText: 'Upgrade: websocket' }).count()).toBeGreaterThan(0);
    expect(await page.locator('body').textContent()).not.toContain('`');
    // Each finding once on the page: the section below adds evidence, it does not repeat them.
    expect(await page.locator('li[data-code="hop-refused-upgrade"]').count()).toBe(1);
    // What the wire showed: every WebSocket session (kubectl's and an SDK client's), each refused twice (the first
    // attempt and its retry), with nginx's reply and the first bytes of its page.
    const wire = page.locator('details.wire');
    expect(await wire.evaluateAll((ds) => ds.map((d) => d.querySelector('summary')!.textContent))).toEqual(
      ['WebSocket exec', 'SDK-client WebSocket exec', 'WebSocket port-forward', 'SDK-client WebSocket port-forward'].flatMap((s) => [
        `${s} 0s (first attempt): UPGRADE_REJECTED`,
        `${s} 0s (retry): UPGRADE_REJECTED`,
      ]),
    );
    await wire.first().locator('summary').click();
    expect(await wire.first().innerText()).toMatch(
      /> GET http:\/\/[^/]+\/api\/v1\/namespaces\/default\/pods\/probe-target\/exec\?[\s\S]*< 403 Forbidden[\s\S]*Server: nginx\/[\d.]+/,
    );
    expect(await wire.first().innerText()).toMatch(/The refusal's page began: <html>.*<title>403 Forbidden<\/title>/);
    await page.close();
  }, 90_000);
});

/** Texts of every chart whose box leaves its SVG's viewBox (what a reader would see cut off). */
async function clippedTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const out: string[] = [];
    for (const svg of doc.querySelectorAll('svg')) {
      const vb = svg.viewBox.baseVal;
      for (const t of svg.querySelectorAll('text')) {
        const b = t.getBBox();
        if (b.x < vb.x - 0.5 || b.x + b.width > vb.x + vb.width + 0.5)
          out.push(`${t.textContent} [${b.x.toFixed(0)}..${(b.x + b.width).toFixed(0)} of ${vb.width}]`);
      }
    }
    return out;
  });
}

describe('charts, RBAC and print', () => {
  it("no chart text leaves its SVG (measured in Chromium), the demo's long labels and lost-at states included; the page prints", async () => {
    const path = join(dir, 'demo-clip.html');
    expect((await cli(['demo', '-o', 'html', '--out', path])).code).toBe(0);
    const page = await open(path);
    expect(await page.locator('svg text').count()).toBeGreaterThan(50);
    expect(await clippedTexts(page)).toEqual([]);
    // Print: the meeting's items and the figures are not split across pages; a PDF comes out.
    await page.emulateMedia({ media: 'print' });
    expect(await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.querySelector('figure')).breakInside)).toBe('avoid');
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    await page.close();
  }, 90_000);

  it('an RBAC preflight that could not be read says why, once, instead of a grid of "?"', async () => {
    const r = await cli(['run', '--kubeconfig', lab.kubeconfig, '--hold', '0s', '--ops', 'exec', '-o', 'json']);
    const report = JSON.parse(r.stdout);
    // As the runner records a review that failed (src/probe/runner.ts): allowed null, and why.
    report.rbac = report.rbac.map((a: any) => ({ ...a, allowed: null, unread: 'SelfSubjectAccessReview answered 503' }));
    const { htmlReport } = await import('../../src/report/html.js');
    const path = join(dir, 'rbac.html');
    writeFileSync(path, htmlReport([{ report }]));
    const page = await open(path);
    expect(await page.locator('table.rbac caption').textContent()).toBe(
      'RBAC preflight (SelfSubjectAccessReview): not read — SelfSubjectAccessReview answered 503',
    );
    expect(await page.locator('table.rbac td.muted').first().textContent()).toBe('? not read');
    await page.close();
  }, 60_000);
});
