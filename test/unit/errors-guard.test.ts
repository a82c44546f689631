/** isProbeError: only the codes ERROR_CODES defines, never a name inherited from Object.prototype. */
import { describe, expect, it } from 'vitest';
import { isProbeError, probeError } from '../../src/errors.js';

describe('isProbeError', () => {
  it('knows its own codes', () => {
    expect(isProbeError(probeError('DIAL_TIMEOUT', 'x', { host: 'h' }))).toBe(true);
    expect(isProbeError(probeError('DIAL_TIMEOUT', 'x', { host: 'h' }), 'DIAL_TIMEOUT')).toBe(true);
    expect(isProbeError(probeError('DIAL_TIMEOUT', 'x', { host: 'h' }), 'DIAL_TLS')).toBe(false);
  });
  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__', 'ECONNRESET'])('an object whose code is %s is not a probe error', (code) => {
    expect(isProbeError({ code, message: 'm' })).toBe(false);
  });
});
