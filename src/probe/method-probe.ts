/**
 * One plain GET, without Upgrade headers, on the subresource whose WebSocket
 * upgrade a hop refused with 403/405 while SPDY's POST passed: it tells a rule
 * on the method (the hop refuses the plain GET too: a verb ACL written for
 * SPDY's POST) from a rule on the Upgrade header (the plain GET reaches the API
 * server, which answers 400 "Upgrade request required"; nothing runs).
 */
import { podPath } from '../streaming/paths.js';
import type { RestClient } from '../kube/rest.js';
import { errorMessage } from '../errors.js';
import type { Operation } from '../vocabulary.js';
import type { SessionResult } from './types.js';
import { refusedByHopRule } from './upgrade-refusal.js';

export interface MethodProbe {
  readonly operation: Operation;
  /** The plain GET's status; null when it got no answer. */
  readonly status: number | null;
  /** The API server answered it (a Kubernetes Status), not a hop. */
  readonly byApiServer: boolean;
  readonly error?: string;
}

/** The operations whose SPDY worked and whose WebSocket a hop refused by a rule, in some session. */
export function operationsToProbe(results: readonly SessionResult[]): Operation[] {
  const ops = new Set<Operation>();
  for (const ws of results) {
    if (ws.transport !== 'websocket' || !refusedByHopRule(ws.upgrade)) continue;
    if (results.some((s) => s.transport === 'spdy' && s.operation === ws.operation && s.upgrade.ok)) ops.add(ws.operation);
  }
  return [...ops];
}

export async function probePlainGet(
  rest: RestClient,
  target: { namespace: string; pod: string; port: number },
  operations: readonly Operation[],
): Promise<MethodProbe[]> {
  return Promise.all(
    operations.map(async (operation): Promise<MethodProbe> => {
      // The same path and a harmless query: without an upgrade the API server runs nothing.
      const query = operation === 'exec' ? 'command=true&stdout=true' : operation === 'attach' ? 'stdout=true' : `ports=${target.port}`;
      try {
        const res = await rest.request('GET', `${podPath(target, operation)}?${query}`, undefined, 5_000);
        return { operation, status: res.status, byApiServer: res.kubeStatus !== undefined };
      } catch (err) {
        return { operation, status: null, byApiServer: false, error: errorMessage(err) };
      }
    }),
  );
}
