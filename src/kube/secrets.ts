/**
 * Secrets (tokens, client keys, passwords, presigned URLs) must never reach
 * output, logs or error messages. Every secret we learn is registered here,
 * and every text we print passes through `redact`.
 */
export class SecretRedactor {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined): void {
    // Very short values would redact ordinary words; no real credential is that short.
    if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('[REDACTED]');
    return redactCredentialForms(out);
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
