/**
 * Real hops are started by the tests themselves. A missing binary skips with
 * a message naming the Debian package, except in CI (CI=true), where it fails.
 */
import { HopMissingError } from '../../lab/real-hops/process-hop.js';

export async function requireHop<T>(start: () => Promise<T>): Promise<T | undefined> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof HopMissingError && process.env.CI !== 'true') {
      console.warn(`SKIPPED (hop missing): ${err.message}`);
      return undefined;
    }
    throw err;
  }
}
