/** docs/hops.md names the WebSocket-only client families exactly as the forecast's `source` does (one source of truth). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KUBECTL_CLIENTS } from '../../src/probe/kubectl-clients.js';
import { WEBSOCKET_ONLY_FAMILIES, familiesTable } from '../../src/probe/sdk-clients.js';

describe('the WebSocket-only client families', () => {
  it("docs/hops.md holds the code's table, row for row", () => {
    expect(readFileSync('docs/hops.md', 'utf8')).toContain(familiesTable());
  });
  it("the WS-only forecast's source names each family with its wire and its source", () => {
    const source = KUBECTL_CLIENTS.find((c) => c.id === 'websocket-only')!.source;
    for (const f of WEBSOCKET_ONLY_FAMILIES) {
      expect(source).toContain(f.name);
      expect(source).toContain(f.source);
      expect(source).toContain(f.proxy);
    }
  });
});
