/** A probe plan against the emulated pod (or a hop in front of it): both operations and transports, hold 0, kubectl's keepalive; `over` narrows it. */
import type { ProbePlan } from '../../src/probe/types.js';

export function labPlan(server: URL, over: Partial<ProbePlan> = {}): ProbePlan {
  return {
    location: 'test',
    cluster: { name: 'lab', connection: { server, upgradeTimeoutMs: 2000 }, namespace: 'default', pod: 'probe-target', container: 'main', port: 8080 },
    operations: ['exec', 'portforward'],
    transports: ['websocket', 'spdy'],
    keepalives: ['kubectl'],
    holdsSeconds: [0],
    echoTimeoutMs: 3000,
    ...over,
  };
}
