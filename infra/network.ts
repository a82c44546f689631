/**
 * Where a location's function sits in its VPC, and what it may reach: a
 * security group of its own with explicit egress only to the API servers (on
 * each cluster's port) and to the AWS APIs it calls, and, for private subnets
 * without NAT, the interface endpoints of those APIs (created, or existing
 * ones named by their security groups).
 * Which AWS APIs, and why only these: src/config/aws-apis.ts.
 */
import { Annotations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { regionOfArn } from '../src/aws/arn.js';
import { neededEndpointServices } from '../src/config/aws-apis.js';
import type { ClusterConfig, LocationConfig } from '../src/config/probe-config.js';

export const HTTPS_PORT = 443;

/** The region an API call for this cluster goes to (its secret's, or the EKS cluster's), when it needs one. */
function awsRegionOf(c: ClusterConfig, locationRegion: string): string | undefined {
  if (c.auth.type === 'secret') return regionOfArn(c.auth.secretArn);
  return c.caData ? undefined : (c.auth.region ?? locationRegion);
}

export interface ProbeNetworkProps {
  readonly location: LocationConfig & { readonly vpc: NonNullable<LocationConfig['vpc']> };
  readonly clusters: readonly ClusterConfig[];
}

export class ProbeNetwork extends Construct {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.ISubnet[];
  /** The function's own security group: egress to the API servers and the AWS APIs only. */
  readonly securityGroup: ec2.SecurityGroup;
  /** All the groups the function gets: its own, then any the config adds. */
  readonly securityGroups: ec2.ISecurityGroup[];
  readonly endpoints: ec2.InterfaceVpcEndpoint[] = [];

  constructor(scope: Construct, id: string, props: ProbeNetworkProps) {
    super(scope, id);
    const { location, clusters } = props;
    const v = location.vpc;
    // Subnets are given by id, so the VPC's zones are never consulted: no context lookup and no credentials at
    // synth. CDK still wants a zone list; without one from the config it gets a placeholder no resource uses.
    this.vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: v.vpcId, availabilityZones: [...(v.availabilityZones ?? ['zones-not-needed'])] });
    this.subnets = v.subnetIds.map((s, i) => {
      const subnet = ec2.Subnet.fromSubnetId(this, `Subnet${i}`, s);
      // The function only places its network interfaces in these subnets; it never reads their route tables.
      Annotations.of(subnet).acknowledgeWarning('@aws-cdk/aws-ec2:noSubnetRouteTableId', 'Subnets are imported only to place the function; route tables are not used.');
      return subnet;
    });
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: this.vpc,
      allowAllOutbound: false,
      description: `kube-stream-probe ${location.name}: egress to its API servers and the AWS APIs it calls, nothing else`,
    });
    const cidrs = v.apiServerCidrs ?? ['0.0.0.0/0'];
    for (const port of [...new Set(clusters.map((c) => Number(new URL(c.endpoint).port || HTTPS_PORT)))].sort((a, b) => a - b)) {
      for (const cidr of cidrs) this.securityGroup.addEgressRule(ec2.Peer.ipv4(cidr), ec2.Port.tcp(port), `Kubernetes API servers on ${port}`);
    }
    this.securityGroups = [this.securityGroup, ...(v.securityGroupIds ?? []).map((g, i) => ec2.SecurityGroup.fromSecurityGroupId(this, `Extra${i}`, g, { mutable: false }))];

    const endpoints = v.endpoints;
    if (endpoints.mode === 'create') {
      const endpointGroup = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
        vpc: this.vpc,
        allowAllOutbound: false,
        description: `kube-stream-probe ${location.name}: HTTPS from the probe to its interface endpoints`,
      });
      endpointGroup.addIngressRule(this.securityGroup, ec2.Port.tcp(HTTPS_PORT), 'HTTPS from the probe function');
      this.securityGroup.addEgressRule(endpointGroup, ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the interface endpoints');
      for (const service of neededEndpointServices(clusters)) {
        this.endpoints.push(
          new ec2.InterfaceVpcEndpoint(this, `Endpoint-${service}`, {
            vpc: this.vpc,
            service: new ec2.InterfaceVpcEndpointAwsService(service),
            subnets: { subnets: this.subnets },
            securityGroups: [endpointGroup],
            privateDnsEnabled: true,
            open: false,
          }),
        );
      }
      // An interface endpoint serves its own region only: a secret or cluster elsewhere needs a route out.
      const elsewhere = [...new Set(clusters.map((c) => awsRegionOf(c, location.region)).filter((r): r is string => r !== undefined && r !== location.region))];
      if (elsewhere.length) {
        Annotations.of(this).addWarningV2(
          'kube-stream-probe:crossRegionWithEndpoints',
          `location ${location.name} reaches the AWS APIs through interface endpoints in ${location.region}, but some clusters' secrets or EKS APIs are in ${elsewhere.join(', ')}: those calls need a NAT gateway or an egress proxy.`,
        );
      }
    } else if (endpoints.mode === 'existing') {
      endpoints.securityGroupIds.forEach((g, i) => {
        const group = ec2.SecurityGroup.fromSecurityGroupId(this, `ExistingEndpointGroup${i}`, g, { mutable: false });
        this.securityGroup.addEgressRule(group, ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the existing interface endpoints');
      });
    } else {
      this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the AWS APIs (CloudWatch, Secrets Manager, EKS) through NAT');
    }
  }
}
