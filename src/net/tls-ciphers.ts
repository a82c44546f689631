/**
 * The TLS 1.3 cipher suites in Go's order, for our client's ClientHello and for the lab's API server.
 *
 * Go (crypto/tls, so client-go, kubectl and the kube-apiserver) orders them AES-128-GCM, AES-256-GCM,
 * ChaCha20-Poly1305 where AES-GCM has hardware support (defaults.go `defaultCipherSuitesTLS13`): a client offers
 * them in that order (handshake_client.go), and a server picks by that order whenever the client's first suite is
 * an AES-GCM one (handshake_server_tls13.go, `aesgcmPreferred`), else ChaCha20 first. Node (OpenSSL) offers
 * TLS_AES_256_GCM_SHA384 first: through a hop that ends TLS taking the client's order (OpenSSL's default, as
 * `openssl s_server` and nginx without ssl_prefer_server_ciphers have it) our client got AES-256 where kubectl gets
 * AES-128, more AES rounds per byte than kubectl pays on the same path (issue 42; checked on 2026-12-07: kubectl 1.33
 * against `openssl s_server` negotiated TLS_AES_128_GCM_SHA256, a default Node client TLS_AES_256_GCM_SHA384).
 * A Node server takes its own order unless told otherwise, Node's (AES-256 first): the lab's emulator gave both
 * clients AES-256 where a kube-apiserver gives both AES-128 (test/interop/tls-suites.test.ts checks it against caddy).
 * The TLS 1.2 suites stay as Node has them: AES-128-GCM leads there already, as in Go's `cipherSuitesPreferenceOrder`.
 */
import tls from 'node:tls';

export const GO_TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'] as const;

/** `nodeCiphers` (an OpenSSL cipher list, Node's default unless given) with the TLS 1.3 suites it holds in Go's order, first. */
export function goCipherOrder(nodeCiphers: string = tls.DEFAULT_CIPHERS): string {
  const entries = nodeCiphers.split(':');
  const isTls13 = (entry: string) => (GO_TLS13_SUITES as readonly string[]).includes(entry);
  return [...GO_TLS13_SUITES.filter((suite) => entries.includes(suite)), ...entries.filter((entry) => !isTls13(entry))].join(':');
}
