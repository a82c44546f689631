/**
 * Hop identification and the rules read from a refused upgrade, table-driven from replies recorded from the lab's
 * real hops (test/fixtures/hop-replies.json, test/fixtures/record-hop-replies.ts: Debian's nginx, HAProxy, Apache,
 * Varnish and nghttpx through the hop catalogue), and for the products no Debian package gives, from their
 * documented replies (each with its source). Every product the probe can name has a row, so a matcher that stops
 * matching fails here, not only in the slow real-hop test.
 */
import { describe, expect, it } from 'vitest';
import { explainFailure } from '../../src/probe/diagnosis.js';
import { HOP_PRODUCTS, identifyHop } from '../../src/probe/hop-products.js';
import type { SessionResult, UpgradeOutcome } from '../../src/probe/types.js';
import { refusedByHopRule, upgradeStripped } from '../../src/probe/upgrade-refusal.js';
import { verdicts } from '../../src/probe/verdicts.js';
import recorded from '../fixtures/hop-replies.json' with { type: 'json' };
import { OK_UPGRADE, session } from '../helpers/sessions.js';

type Reply = Pick<UpgradeOutcome, 'status' | 'server' | 'via' | 'bodyPrefix' | 'kubernetesStatus' | 'error' | 'statusReason'>;
interface Row {
  readonly path: string;
  readonly operation: 'exec' | 'portforward';
  readonly transport: 'websocket' | 'spdy';
  readonly reply: Reply;
}
const ROWS = recorded.replies as unknown as Row[];

/** The product each recorded path's replies name (by the path's own product), or undefined when the API server answered through a hop that adds nothing. */
const EXPECTED: Readonly<Record<string, string>> = { nginx: 'nginx', haproxy: 'haproxy', apache: 'apache', varnish: 'varnish', nghttpx: 'nghttpx' };

/** Replies of products the lab cannot run, as their vendors document them. */
const DOCUMENTED: readonly { id: string; reply: Reply; source: string }[] = [
  {
    id: 'aws-alb',
    reply: {
      status: 403,
      server: 'awselb/2.0',
      bodyPrefix: '<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n<hr><center>awselb/2.0</center>',
      kubernetesStatus: false,
      error: 'HTTP 403',
    },
    source:
      'docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-troubleshooting.html (HTTP 403: a WAF or a fixed-response rule; the page names awselb/2.0)',
  },
  {
    id: 'envoy',
    reply: { status: 403, server: 'envoy', bodyPrefix: 'RBAC: access denied', kubernetesStatus: false, error: 'HTTP 403' },
    source: "envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/rbac_filter (a denied request: 403 'RBAC: access denied')",
  },
  {
    id: 'envoy',
    reply: { status: 403, server: 'istio-envoy', bodyPrefix: 'RBAC: access denied', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'istio.io/latest/docs/tasks/security/authorization/authz-http/ (an AuthorizationPolicy DENY: 403 RBAC: access denied)',
  },
  {
    id: 'envoy',
    reply: { status: 403, server: 'envoy', bodyPrefix: '', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/ext_authz_filter (a denied check: 403 with an empty body by default)',
  },
  {
    id: 'envoy',
    reply: {
      status: 503,
      bodyPrefix: 'upstream connect error or disconnect/reset before headers. reset reason: connection failure',
      kubernetesStatus: false,
      error: 'HTTP 503',
    },
    source:
      'envoyproxy.io/docs/envoy/latest/faq/debugging/why_is_envoy_sending_503s (no Server header on a local reply with server_header_transformation PASS_THROUGH)',
  },
  {
    id: 'caddy',
    reply: { status: 403, server: 'Caddy', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'caddyserver.com/docs/caddyfile/directives/respond (Caddy sets Server: Caddy)',
  },
  {
    id: 'traefik',
    reply: { status: 403, server: 'Traefik', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'doc.traefik.io/traefik/ (a Server header only when a middleware adds it)',
  },
  {
    id: 'cloudflare',
    reply: { status: 403, server: 'cloudflare', bodyPrefix: '<!DOCTYPE html>…Cloudflare Ray ID', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'developers.cloudflare.com/support/troubleshooting/http-status-codes/4xx-client-error/error-403/',
  },
  {
    id: 'squid',
    reply: { status: 403, server: 'squid/5.7', via: '1.1 proxy (squid/5.7)', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'squid-cache.org (ERR_ACCESS_DENIED pages carry Server and Via)',
  },
  {
    id: 'tinyproxy',
    reply: { status: 403, server: 'tinyproxy/1.11.1', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'tinyproxy.github.io (its error pages carry Server: tinyproxy/VERSION)',
  },
  {
    id: 'privoxy',
    reply: { status: 403, bodyPrefix: 'Request blocked by Privoxy', kubernetesStatus: false, error: 'HTTP 403' },
    source: 'privoxy.org/user-manual (the block page)',
  },
];

const upgradeOf = (reply: Reply): UpgradeOutcome => ({
  ...OK_UPGRADE,
  ...reply,
  ok: false,
  handshakeMs: null,
  errorCode: 'UPGRADE_REJECTED',
  error: reply.error ?? null,
});
const failed = (row: Pick<Row, 'operation' | 'transport' | 'reply'>): SessionResult =>
  session(row.transport, { operation: row.operation, ok: false, firstEchoMs: null, echoMs: null, upgrade: upgradeOf(row.reply) });

describe('hop identification, from recorded real replies', () => {
  it('the recording covers the lab products that refuse upgrades', () => {
    expect(new Set(ROWS.map((r) => Object.keys(EXPECTED).find((p) => r.path.startsWith(p))))).toEqual(new Set(Object.keys(EXPECTED)));
  });

  it.each(ROWS.map((r) => [`${r.path}: ${r.operation} over ${r.transport}, ${r.reply.status}`, r] as const))('%s', (_name, row) => {
    const product = EXPECTED[Object.keys(EXPECTED).find((p) => row.path.startsWith(p))!];
    expect(identifyHop(row.reply)?.product.id).toBe(product);
  });
});

describe('hop identification, from documented replies of products the lab cannot run', () => {
  it.each(DOCUMENTED.map((d) => [`${d.id}: ${d.reply.server ?? d.reply.bodyPrefix}`, d] as const))('%s', (_name, d) => {
    expect(identifyHop(d.reply)?.product.id).toBe(d.id);
  });

  it('every product the probe can name has a row', () => {
    const covered = new Set([...Object.values(EXPECTED), ...DOCUMENTED.map((d) => d.id)]);
    expect(HOP_PRODUCTS.map((p) => p.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  it('a reply that names no product names none', () => {
    expect(identifyHop({ server: 'gunicorn', bodyPrefix: 'Forbidden' })).toBeUndefined();
  });
});

describe('the refusal rules, on recorded replies', () => {
  it('a 403 or a 405 from a hop is a rule; the same status as a Kubernetes Status is not', () => {
    const acl = ROWS.find((r) => r.path.startsWith('nginx verb ACL'))!;
    expect(refusedByHopRule(upgradeOf(acl.reply))).toBe(true);
    expect(refusedByHopRule(upgradeOf({ ...acl.reply, status: 405 }))).toBe(true);
    expect(refusedByHopRule(upgradeOf({ ...acl.reply, status: 404 }))).toBe(false);
    expect(refusedByHopRule(upgradeOf({ ...acl.reply, kubernetesStatus: true }))).toBe(false);
    const diagnosis = (status: number) => explainFailure(failed({ ...acl, reply: { ...acl.reply, status } }), {})!;
    expect(diagnosis(405).code).toBe('hop-refused-upgrade');
    expect(diagnosis(405).check).toMatch(/refuses the .* by a rule/);
    expect(diagnosis(403).check).toMatch(/refuses the .* by a rule/);
    expect(diagnosis(502).check).not.toMatch(/by a rule/);
  });

  it("a stripped upgrade is the API server's 400, not a hop's", () => {
    const stripped = ROWS.find((r) => r.path.startsWith('varnish without'))!;
    expect(upgradeStripped(upgradeOf(stripped.reply))).toBe(true);
    expect(upgradeStripped(upgradeOf({ ...stripped.reply, kubernetesStatus: false }))).toBe(false);
  });

  it('http2-leg: WebSocket upgraded and SPDY reached the API server without its Upgrade; a 400 from the hop itself is not it', () => {
    const h2 = ROWS.find((r) => r.path.startsWith('nghttpx') && r.operation === 'exec')!;
    const codes = (reply: Reply) => verdicts([session('websocket'), failed({ ...h2, reply })])[0]!.diagnosis.map((d) => d.code);
    expect(codes(h2.reply)).toContain('http2-leg');
    expect(verdicts([session('websocket'), failed(h2)])[0]!.diagnosis.find((d) => d.code === 'http2-leg')!.summary).toMatch(
      /Via header names an HTTP\/2 leg \("2 nghttpx"\)/,
    );
    expect(codes({ ...h2.reply, kubernetesStatus: false })).not.toContain('http2-leg');
    // Both broken is no HTTP/2 leg: nothing upgraded through it.
    expect(verdicts([failed({ ...h2, transport: 'websocket' }), failed(h2)])[0]!.diagnosis.map((d) => d.code)).not.toContain('http2-leg');
  });

  it("verb-acl: SPDY's POST passed, WebSocket's GET refused by the hop's rule (recorded from nginx, HAProxy and Apache)", () => {
    for (const prefix of ['nginx verb ACL', 'haproxy verb ACL', 'apache verb ACL']) {
      const row = ROWS.find((r) => r.path.startsWith(prefix) && r.operation === 'exec')!;
      const v = verdicts([session('spdy'), failed(row)], { methodProbes: [{ operation: 'exec', status: row.reply.status!, byApiServer: false }] })[0]!;
      expect(
        v.diagnosis.map((d) => d.code),
        prefix,
      ).toContain('verb-acl');
      // The same refusal as the API server's own (RBAC) is no verb ACL.
      const rbac = verdicts([session('spdy'), failed({ ...row, reply: { ...row.reply, kubernetesStatus: true } })])[0]!;
      expect(
        rbac.diagnosis.map((d) => d.code),
        prefix,
      ).not.toContain('verb-acl');
    }
  });
});
