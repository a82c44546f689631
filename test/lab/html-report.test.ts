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
    expect(await page.locator('ul.diagnoses li[data-code="hop-refused-upgrade"] .check').first().textContent()).toMatch(/^Check next: /);
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
