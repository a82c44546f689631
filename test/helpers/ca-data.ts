/**
 * A cluster's caData as plans carry it (base64 of a PEM CA certificate, as EKS's certificateAuthority.data): a real
 * certificate, since a bundle without one is refused (config/rules.ts caData). One per name, made once.
 */
import { selfSignedCertificate } from '../../lab/emulator/tls.js';

const made = new Map<string, string>();

export function caData(name = 'test-ca'): string {
  let data = made.get(name);
  if (data === undefined) {
    data = Buffer.from(selfSignedCertificate([`DNS:${name}`], name).certPem).toString('base64');
    made.set(name, data);
  }
  return data;
}
