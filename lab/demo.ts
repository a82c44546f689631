/**
 * The demo's network paths: the emulated API server reached directly and
 * through simulated hops that each reproduce a known way streaming breaks.
 */
import { upstreamOf, type Hop } from './hops/common.js';
import { startL7Hop } from './hops/l7-hop.js';
import { startTcpHop } from './hops/tcp-hop.js';

export interface DemoPath {
  readonly name: string;
  /** What this hop stands for, in one line. */
  readonly stands: string;
  start(api: URL): Promise<Hop | undefined>;
}

export const DEMO_IDLE_CUT_SECONDS = 6;
export const DEMO_HOLD_SECONDS = 8;

export const DEMO_PATHS: readonly DemoPath[] = [
  { name: 'direct', stands: 'straight to the API server', start: async () => undefined },
  {
    name: 'l7-refuses-websocket',
    stands: 'an L7 proxy or WAF that blocks WebSocket upgrades with its own 403 page',
    start: (api) => startL7Hop('l7-refuses-websocket', { upstream: upstreamOf(api), refuse: ['websocket'], refuseStatus: 403 }),
  },
  {
    name: 'l7-refuses-spdy',
    stands: 'an L7 gateway that knows WebSocket but not SPDY/3.1',
    start: (api) => startL7Hop('l7-refuses-spdy', { upstream: upstreamOf(api), refuse: ['spdy'], refuseStatus: 400 }),
  },
  {
    name: 'buffering-l7',
    stands: 'a buffering L7 hop that never answers an upgrade request',
    start: (api) => startL7Hop('buffering-l7', { upstream: upstreamOf(api), holdUpgrades: true }),
  },
  {
    name: `l4-idle-${DEMO_IDLE_CUT_SECONDS}s`,
    stands: `an L4 load balancer that cuts connections idle for ${DEMO_IDLE_CUT_SECONDS} s (any byte counts)`,
    start: (api) => startTcpHop(`l4-idle-${DEMO_IDLE_CUT_SECONDS}s`, { upstream: upstreamOf(api), idleCutSeconds: DEMO_IDLE_CUT_SECONDS }),
  },
  {
    name: `l4-idle-${DEMO_IDLE_CUT_SECONDS}s-data-only`,
    stands: `a hop that cuts after ${DEMO_IDLE_CUT_SECONDS} s without application data (keepalive frames do not count)`,
    start: (api) =>
      startTcpHop(`l4-idle-${DEMO_IDLE_CUT_SECONDS}s-data-only`, { upstream: upstreamOf(api), idleCutSeconds: DEMO_IDLE_CUT_SECONDS, activityMinBytes: 16 }),
  },
];
