/**
 * Where the audit files each diagnosis (issue 53): from the catalogue, never a default. Before, 19 codes were mapped
 * and every other one was told to "pass the upgrade".
 */
import { describe, expect, it } from 'vitest';
import { fixCategory } from '../../src/audit/audit.js';
import { DIAGNOSES, type DiagnosisCode } from '../../src/probe/diagnosis-codes.js';

describe('the audit’s filing of diagnoses', () => {
  it('the codes the old default sent to "upgrade passthrough" are filed under their own fix', () => {
    const filed: Partial<Record<DiagnosisCode, string>> = {
      'flow-forgotten': 'idle timeouts',
      'lifetime-cap': 'connection lifetime',
      'mtu-black-hole': 'MTU',
      'cut-despite-pings': 'connection lifetime',
      'stream-error-after-upgrade': 'kubelet path',
      'stdin-eof-lost': 'kubelet path',
      'tty-resize-lost': 'kubelet path',
      'tls-certificate': 'TLS',
      'api-server-refused': 'API server',
      'channel-broken': 'buffering',
      'black-hole': 'idle timeouts',
    };
    for (const [code, category] of Object.entries(filed)) expect(fixCategory(code as DiagnosisCode), code).toBe(category);
  });

  it('a restatement, a qualifier or the probe’s own setup is no fix of its own', () => {
    for (const code of ['silent-fallback', 'kubectl-breaks-today', 'exec-portforward-disagree', 'not-compared', 'flapping', 'target-missing'] as const)
      expect(fixCategory(code), code).toBeUndefined();
  });

  it('every code is filed: under a fix, or said why not', () => {
    for (const code of Object.keys(DIAGNOSES) as DiagnosisCode[]) {
      const filing = DIAGNOSES[code].audit;
      expect(fixCategory(code) ?? filing, code).toBe(filing);
    }
  });
});
