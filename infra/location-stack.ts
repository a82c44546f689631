/** One stack per network location: account, region, and a StreamProbe. */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { LocationConfig, ProbeConfig } from '../src/config/probe-config.js';
import { StreamProbe } from './stream-probe.js';

export interface LocationStackProps extends StackProps {
  readonly config: ProbeConfig;
  readonly location: LocationConfig;
}

export class LocationStack extends Stack {
  readonly probe: StreamProbe;

  constructor(scope: Construct, id: string, props: LocationStackProps) {
    super(scope, id, { ...props, env: { account: props.location.account, region: props.location.region }, description: `kube-stream-probe from ${props.location.name}` });
    this.probe = new StreamProbe(this, 'Probe', { config: props.config, location: props.location });
  }
}
