/**
 * One stack per network location: account, region, and a StreamProbe. The
 * YAML config is the app's front door; this maps one location of it onto the
 * construct's props (infra/props.ts).
 */
import { Annotations, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { crossLocationPlan } from '../src/config/cross-location.js';
import { runtimeConfigFor, type LocationConfig, type ProbeConfig } from '../src/config/probe-config.js';
import { formatSize } from '../src/vocabulary.js';
import type { ProbeCluster, StreamProbeProps } from './props.js';
import { StreamProbe } from './stream-probe.js';

export interface LocationStackProps extends StackProps {
  readonly config: ProbeConfig;
  readonly location: LocationConfig;
}

export class LocationStack extends Stack {
  readonly probe: StreamProbe;

  constructor(scope: Construct, id: string, props: LocationStackProps) {
    super(scope, id, {
      ...props,
      env: { account: props.location.account, region: props.location.region },
      description: `kube-stream-probe from ${props.location.name}`,
    });
    this.probe = new StreamProbe(this, 'Probe', probePropsFromConfig(this, props.config, props.location));
  }
}

/** The StreamProbe props for one location of the YAML config. */
export function probePropsFromConfig(scope: Construct, config: ProbeConfig, location: LocationConfig): StreamProbeProps {
  const clusters = runtimeConfigFor(config, location).clusters.map(
    (c): ProbeCluster => ({
      name: c.name,
      endpoint: c.endpoint,
      caData: c.caData,
      target: c.target,
      auth:
        c.auth.type === 'eks'
          ? c.auth
          : {
              type: 'secret',
              secret: secretsmanager.Secret.fromSecretAttributes(scope, `Secret-${c.name}`, {
                secretCompleteArn: c.auth.secretArn,
                encryptionKey: c.auth.kmsKeyArn ? kms.Key.fromKeyArn(scope, `SecretKey-${c.name}`, c.auth.kmsKeyArn) : undefined,
              }),
            },
    }),
  );
  const vpc = location.vpc;
  const network: Partial<StreamProbeProps> = vpc
    ? {
        // Subnets are given by id, so the VPC's zones are never consulted: no context lookup and no credentials at
        // synth. CDK still wants a zone list; without one from the config it gets a placeholder no resource uses.
        vpc: ec2.Vpc.fromVpcAttributes(scope, 'Vpc', { vpcId: vpc.vpcId, availabilityZones: [...(vpc.availabilityZones ?? ['zones-not-needed'])] }),
        subnets: vpc.subnetIds.map((id) => {
          const subnet = ec2.Subnet.fromSubnetId(scope, `Subnet-${id}`, id);
          // The function only places its network interfaces in these subnets; it never reads their route tables.
          Annotations.of(subnet).acknowledgeWarning(
            '@aws-cdk/aws-ec2:noSubnetRouteTableId',
            'Subnets are imported only to place the function; route tables are not used.',
          );
          return subnet;
        }),
        securityGroups: vpc.securityGroupIds?.map((id) => ec2.SecurityGroup.fromSecurityGroupId(scope, `SecurityGroup-${id}`, id, { mutable: false })),
        apiServerPeers: vpc.apiServerCidrs?.map((cidr) => ec2.Peer.ipv4(cidr)),
        interfaceEndpoints:
          vpc.endpoints.mode === 'existing'
            ? vpc.endpoints.securityGroupIds.map((id) => ec2.SecurityGroup.fromSecurityGroupId(scope, `EndpointGroup-${id}`, id, { mutable: false }))
            : vpc.endpoints.mode,
        s3Gateway:
          vpc.endpoints.mode === 'none' || (!vpc.endpoints.s3PrefixListId && !(vpc.endpoints.mode === 'create' && vpc.endpoints.routeTableIds))
            ? undefined
            : { prefixListId: vpc.endpoints.s3PrefixListId ?? '', routeTableIds: vpc.endpoints.mode === 'create' ? vpc.endpoints.routeTableIds : undefined },
      }
    : {};
  return {
    locationName: location.name,
    project: config.project,
    clusters,
    schedules: config.schedules.map((s) => ({
      name: s.name,
      expression: s.expression,
      holds: s.holdsSeconds.map((h) => Duration.seconds(h)),
      keepalives: s.keepalives,
      operations: s.operations,
      ...(s.transferBytes ? { transfer: formatSize(s.transferBytes) } : {}),
      ...(s.holdShapes ? { holdShapes: s.holdShapes } : {}),
      ...(s.transferShapes ? { transferShapes: s.transferShapes } : {}),
    })),
    ...network,
    memorySize: config.memoryMb,
    logRetention: config.logRetentionDays as logs.RetentionDays,
    pageEmail: config.alarmEmail,
    ticketEmail: config.ticketEmail ?? config.alarmEmail,
    alarms: config.alarms,
    ...forwardPagesFor(config, location),
  };
}

/** The location's pages of clusters other locations probe too go to the project's page bus (cross-location.ts). */
function forwardPagesFor(config: ProbeConfig, location: LocationConfig): Pick<StreamProbeProps, 'forwardPages'> {
  const plan = crossLocationPlan(config);
  const clusters = plan ? Object.keys(plan.clusters).filter((c) => plan.clusters[c]!.includes(location.name)) : [];
  return plan && clusters.length ? { forwardPages: { eventBusArn: plan.busArn, clusters } } : {};
}
