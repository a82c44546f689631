import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';

/** Every TypeScript source below these folders, except the file that defines the codes. */
function sources(dirs: readonly string[]): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts') && p !== join('src', 'errors.ts')) out.push(readFileSync(p, 'utf8'));
    }
  };
  dirs.forEach(walk);
  return out.join('\n');
}

const documentedCodes = (doc: string) => [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);

describe('docs/errors.md', () => {
  const doc = readFileSync('docs/errors.md', 'utf8');

  it('documents exactly the error codes the code defines', () => {
    expect(documentedCodes(doc).sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('every code is raised somewhere (a code nobody raises is a promise nobody keeps)', () => {
    const code = sources(['src', 'infra', 'functions']);
    const neverRaised = Object.keys(ERROR_CODES).filter((c) => !code.includes(`'${c}'`));
    expect(neverRaised).toEqual([]);
  });

  it('no message pastes a code into its text', () => {
    const code = sources(['src', 'infra', 'functions']);
    const pasted = Object.keys(ERROR_CODES).filter((c) => new RegExp('`' + c + ': ').test(code) || code.includes(`'${c}: `));
    expect(pasted).toEqual([]);
  });
});

describe("docs/errors.md's bounds", () => {
  it('every bound in the table is the code’s own value, and every code the table names exists', async () => {
    const doc = readFileSync('docs/errors.md', 'utf8');
    const { MAX_REST_BODY_BYTES, DEFAULT_REST_TIMEOUT_MS } = await import('../../src/kube/rest.js');
    const { DEFAULT_DIAL_TIMEOUT_MS, DEFAULT_UPGRADE_TIMEOUT_MS } = await import('../../src/net/connection.js');
    const { REJECTION_BODY_BYTES, DEFAULT_MAX_WS_MESSAGE_BYTES } = await import('../../src/streaming/upgrade.js');
    const { MAX_PROXY_REPLY_BYTES } = await import('../../src/net/read-until.js');
    const { DEFAULT_SPDY_LIMITS } = await import('../../src/streaming/spdy/constants.js');
    const { ERROR_STREAM_MAX_BYTES, MAX_QUEUED_REPLY_BYTES } = await import('../../src/streaming/bounded-text.js');
    const { MESSAGE_MAX_CHARS } = await import('../../src/streaming/channel/exec-status.js');
    const { FRAGMENT } = await import('../../src/kube/secrets.js');
    const { WIRE_LOG_FRAMES_PER_CONNECTION } = await import('../../src/cli/wire-log.js');
    const bytes = (n: number) => (n % (1024 * 1024) === 0 ? `${n / 1024 / 1024} MiB` : `${n / 1024} KiB`);
    const seconds = (ms: number) => `${ms / 1000} s`;
    const expected: Record<string, string> = {
      MAX_REST_BODY_BYTES: bytes(MAX_REST_BODY_BYTES),
      DEFAULT_REST_TIMEOUT_MS: seconds(DEFAULT_REST_TIMEOUT_MS),
      DEFAULT_DIAL_TIMEOUT_MS: seconds(DEFAULT_DIAL_TIMEOUT_MS),
      DEFAULT_UPGRADE_TIMEOUT_MS: seconds(DEFAULT_UPGRADE_TIMEOUT_MS),
      REJECTION_BODY_BYTES: bytes(REJECTION_BODY_BYTES),
      MAX_PROXY_REPLY_BYTES: bytes(MAX_PROXY_REPLY_BYTES),
      DEFAULT_MAX_WS_MESSAGE_BYTES: bytes(DEFAULT_MAX_WS_MESSAGE_BYTES),
      'DEFAULT_SPDY_LIMITS.maxFramePayloadBytes': bytes(DEFAULT_SPDY_LIMITS.maxFramePayloadBytes),
      'DEFAULT_SPDY_LIMITS.maxConcurrentStreams': String(DEFAULT_SPDY_LIMITS.maxConcurrentStreams),
      ERROR_STREAM_MAX_BYTES: bytes(ERROR_STREAM_MAX_BYTES),
      MESSAGE_MAX_CHARS: String(MESSAGE_MAX_CHARS),
      MAX_QUEUED_REPLY_BYTES: bytes(MAX_QUEUED_REPLY_BYTES),
      FRAGMENT: String(FRAGMENT),
      WIRE_LOG_FRAMES_PER_CONNECTION: String(WIRE_LOG_FRAMES_PER_CONNECTION),
    };
    const rows = Object.fromEntries([...doc.matchAll(/^\| `([A-Za-z_.]+)` \([^)]*\) \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]));
    expect(rows).toEqual(expected);
    const named = [...doc.slice(doc.indexOf('## Bounds')).matchAll(/`([A-Z][A-Z_]+)`/g)]
      .map((m) => m[1]!)
      .filter((c) => /^[A-Z]+_[A-Z_]+$/.test(c) && !(c in expected) && !/_(MS|BYTES|CHARS)$/.test(c));
    for (const c of new Set(named)) expect(Object.keys(ERROR_CODES), c).toContain(c);
  });
});
