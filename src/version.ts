/** The probe's version, read from package.json once (it is the only place it is written). */
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;

/** Our User-Agent, in the shape kubectl's has (`kubectl/v1.33.1 (linux/amd64) …`), so server logs tell us apart. */
export function userAgent(runner?: 'lambda' | 'task'): string {
  return `kube-stream-probe/${VERSION} (${process.platform}/${process.arch})${runner ? ` ${runner}` : ''}`;
}
