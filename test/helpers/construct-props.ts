/** The smallest StreamProbe a test mutates: one EKS cluster, a 5-minute and an hourly schedule; synthesized in a stack of its own. */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { StreamProbe, type StreamProbeProps } from '../../infra/stream-probe.js';

type Json = any;
/** The real entry, bundled by esbuild: the rule tests throw before bundling. */
const ENTRY_STUB = new URL('../../functions/probe.ts', import.meta.url).pathname;

/** A construct built from the minimal props with `mutate` applied: call it to synthesize (and see what it throws). */
export const constructWith = (mutate: (p: Json) => void) => () => {
  const stack = new Stack(new App(), 'Rules', { env: { account: '111111111111', region: 'eu-west-1' } });
  const props: Json = {
    locationName: 'eu-west-1-public',
    clusters: [
      {
        name: 'prod-eu',
        endpoint: 'https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com',
        auth: { type: 'eks', clusterName: 'prod-eu' },
        target: { namespace: 'kube-stream-probe', port: 8080 },
      },
    ],
    schedules: [
      { name: 'short', expression: 'rate(5 minutes)', holds: [Duration.seconds(0), Duration.seconds(65)] },
      { name: 'long', expression: 'rate(1 hour)', holds: [Duration.minutes(6)] },
    ],
    entry: ENTRY_STUB,
  };
  mutate(props);
  new StreamProbe(stack, 'Probe', props as StreamProbeProps);
};
