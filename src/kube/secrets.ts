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
    // Belt and braces: bearer tokens and EKS tokens that were never registered.
    return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, '$1[REDACTED]').replace(/k8s-aws-v1\.[A-Za-z0-9_-]+/g, 'k8s-aws-v1.[REDACTED]');
  }
}
