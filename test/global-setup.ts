/**
 * One temp directory per test run: every test's mkdtemp (emulator
 * kubeconfigs, CDK outdirs, kubectl's cache, real hops' configs, Chromium
 * profiles) lands under it through TMPDIR, which the workers and the
 * processes they start inherit, and it is removed when the run ends, however
 * a test ended; so are the network namespaces of kernel paths whose worker died.
 * Tests still clean up after themselves; this is the net.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepDeadNamespaces } from '../lab/kernel-hops/netns.js';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'ksp-test-run-'));
  // Traversable by the real hops' own users (squid drops to "proxy"): each test's dir keeps its own mode.
  chmodSync(dir, 0o755);
  process.env.TMPDIR = dir;
  return () => {
    // Kernel paths remove their namespaces themselves; a worker that died cannot, and its namespaces go here.
    sweepDeadNamespaces();
    rmSync(dir, { recursive: true, force: true });
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  };
}
