import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every temp dir of the run under one TMPDIR, removed at the end (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Interop tests spawn real kubectl binaries and real proxies; they are
    // network-bound, not CPU-bound, so a generous timeout is not a speed target.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on CI's 2 cores (vitest's default there is one: cores - 1). Most of the suite waits on real
    // kubectl, proxies, holds and timeouts rather than computing; the kernel paths take pid-derived names and
    // addresses, so two workers' paths never collide (lab/kernel-hops/netns.ts).
    maxWorkers: 2,
    reporters: ['default'],
  },
});
