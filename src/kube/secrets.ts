/**
 * Secrets (tokens, client keys, passwords, presigned URLs) must never reach
 * output, logs or error messages. Every secret we learn is registered here,
 * and every text we print passes through `redact`.
 */
export class SecretRedactor {
  private readonly secrets = new Set<string>();
  /** Every FRAGMENT-long run of every secret, lower-cased → nothing (a set): a window of text is looked up here. */
  private readonly fragments = new Set<string>();

  add(secret: string | undefined): void {
    // Very short values would redact ordinary words; no real credential is that short.
    if (!secret || secret.length < 6 || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    const lower = secret.toLowerCase();
    for (let i = 0; i + FRAGMENT <= lower.length; i++) this.fragments.add(lower.slice(i, i + FRAGMENT));
  }

  /**
   * The text without any registered secret, whole or in part: every run of FRAGMENT or more characters that stands in
   * a secret goes, in any case (a peer may clip a token at any byte, or print a header name lower-cased), then the
   * credential forms no one registered (redactCredentialForms).
   */
  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('[REDACTED]');
    if (this.fragments.size > 0 && out.length >= FRAGMENT) out = this.redactFragments(out);
    return redactCredentialForms(out);
  }

  /** Runs of text whose every FRAGMENT-long window is a piece of a secret, replaced. Linear in the text. */
  private redactFragments(text: string): string {
    const lower = text.toLowerCase();
    // Lower-casing can change a string's length (a few Unicode letters): then windows would not line up; compare as is.
    const hay = lower.length === text.length ? lower : text;
    let out = '';
    let from = 0;
    let i = 0;
    while (i + FRAGMENT <= hay.length) {
      if (!this.fragments.has(hay.slice(i, i + FRAGMENT))) {
        i++;
        continue;
      }
      let end = i + FRAGMENT;
      while (end < hay.length && this.fragments.has(hay.slice(end - FRAGMENT + 1, end + 1))) end++;
      out += `${text.slice(from, i)}[REDACTED]`;
      from = i = end;
    }
    return from === 0 ? text : out + text.slice(from);
  }

  /** A structured value (a result, a summary) with every string redacted, and any field named as a credential emptied. */
  redactValue<T>(value: T): T {
    const walk = (v: unknown, key?: string): unknown => {
      if (typeof v === 'string') return key !== undefined && CREDENTIAL_KEY.test(key) ? '[REDACTED]' : this.redact(v);
      if (Array.isArray(v)) return v.map((x) => walk(x));
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
      return v;
    };
    return walk(value) as T;
  }
}

/**
 * The shortest piece of a secret that is redacted wherever it stands (issue 57: a peer's text is clipped before it is
 * shown, so a token may arrive cut at any character). Shorter runs are too likely to be ordinary words; 12 characters
 * of a random token are 60+ bits of it.
 */
export const FRAGMENT = 12;

/** Field names that hold a credential, whatever their value looks like. */
const CREDENTIAL_KEY =
  /^(?:access|refresh|id|session|auth|bearer|api|client)?[_-]?(?:token|password|passwd|pwd|secret|api[_-]?key|access[_-]?key|client[_-]?secret)$/i;

/**
 * Credentials in the forms they take in text we did not register (a failing exec plugin's stderr, a proxy URL, a
 * presigned URL, a key pasted into a message): `Bearer …`, `Basic …`, EKS tokens, `token=…` / `password: …` pairs,
 * user:password in URLs, AWS presigned query parameters, PEM private keys. The value goes; the name stays, so the
 * message still says which credential was wrong.
 */
export function redactCredentialForms(text: string): string {
  return text
    .replace(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, '[REDACTED PRIVATE KEY]')
    .replace(/\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1$2[REDACTED]')
    .replace(/k8s-aws-v1\.[A-Za-z0-9_-]+/g, 'k8s-aws-v1.[REDACTED]')
    .replace(/\b(X-Amz-(?:Signature|Credential|Security-Token))=[^&\s"']+/gi, '$1=[REDACTED]')
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"']+:)[^\s/@"']+@/gi, '$1[REDACTED]@')
    .replace(
      /\b((?:access|refresh|id|session|auth|bearer|api|client)?[_-]?(?:token|password|passwd|pwd|secret|api[_-]?key|access[_-]?key|client[_-]?secret))(["']?\s*[=:]\s*["']?)(?![^\s"'&,;]*\[REDACTED)[^\s"'&,;]{4,}/gi,
      '$1$2[REDACTED]',
    );
}
