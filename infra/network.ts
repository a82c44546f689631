/**
 * Where a location's function sits in its VPC, and what it may reach: a
 * security group of its own with explicit egress only to the API servers (on
 * each cluster's port) and to the AWS APIs it calls, and, for private subnets
 * without NAT, the interface endpoints of those APIs (created, or existing
 * ones named by their security groups). Which APIs, and why only these:
 * src/config/aws-apis.ts.
 */
import { Annotations, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { regionOfArn } from '../src/aws/arn.js';
import { neededEndpointServices } from '../src/config/aws-apis.js';
import type { ClusterConfig } from '../src/config/probe-config.js';

export const HTTPS_PORT = 443;

/** The region an API call for this cluster goes to (its secret's, or the EKS cluster's), when it needs one. */
function awsRegionOf(c: ClusterConfig, stackRegion: string): string | undefined {
  if (c.auth.type === 'secret') return Token.isUnresolved(c.auth.secretArn) ? stackRegion : regionOfArn(c.auth.secretArn);
  return c.caData ? undefined : (c.auth.region ?? stackRegion);
}

export interface ProbeNetworkProps {
  readonly locationName: string;
  readonly vpc: ec2.IVpc;
  readonly subnets: readonly ec2.ISubnet[];
  readonly clusters: readonly ClusterConfig[];
  readonly securityGroups?: readonly ec2.ISecurityGroup[];
  readonly apiServerPeers?: readonly ec2.IPeer[];
  readonly interfaceEndpoints?: 'create' | 'none' | readonly ec2.ISecurityGroup[];
}

export class ProbeNetwork extends Construct {
  /** The function's own security group: egress to the API servers and the AWS APIs only. */
  readonly securityGroup: ec2.SecurityGroup;
  /** All the groups the function gets: its own, then the extra ones. */
  readonly securityGroups: ec2.ISecurityGroup[];
  readonly endpoints: ec2.InterfaceVpcEndpoint[] = [];

  constructor(scope: Construct, id: string, props: ProbeNetworkProps) {
    super(scope, id);
    const { vpc, clusters } = props;
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc,
      allowAllOutbound: false,
      description: `kube-stream-probe ${props.locationName}: egress to its API servers and the AWS APIs it calls, nothing else`,
    });
    const peers = props.apiServerPeers ?? [ec2.Peer.anyIpv4()];
    for (const port of [...new Set(clusters.map((c) => Number(new URL(c.endpoint).port || HTTPS_PORT)))].sort((a, b) => a - b)) {
      for (const peer of peers) this.securityGroup.addEgressRule(peer, ec2.Port.tcp(port), `Kubernetes API servers on ${port}`);
    }
    this.securityGroups = [this.securityGroup, ...(props.securityGroups ?? [])];

    const endpoints = props.interfaceEndpoints ?? 'none';
    if (endpoints === 'create') {
      const endpointGroup = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
        vpc,
        allowAllOutbound: false,
        description: `kube-stream-probe ${props.locationName}: HTTPS from the probe to its interface endpoints`,
      });
      endpointGroup.addIngressRule(this.securityGroup, ec2.Port.tcp(HTTPS_PORT), 'HTTPS from the probe function');
      this.securityGroup.addEgressRule(endpointGroup, ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the interface endpoints');
      for (const service of neededEndpointServices(clusters)) {
        this.endpoints.push(
          new ec2.InterfaceVpcEndpoint(this, `Endpoint-${service}`, {
            vpc,
            service: new ec2.InterfaceVpcEndpointAwsService(service),
            subnets: { subnets: [...props.subnets] },
            securityGroups: [endpointGroup],
            privateDnsEnabled: true,
            open: false,
          }),
        );
      }
      // An interface endpoint serves its own region only: a secret or cluster elsewhere needs a route out.
      const region = Stack.of(this).region;
      const elsewhere = [...new Set(clusters.map((c) => awsRegionOf(c, region)).filter((r): r is string => r !== undefined && r !== region))];
      if (elsewhere.length) {
        Annotations.of(this).addWarningV2(
          'kube-stream-probe:crossRegionWithEndpoints',
          `location ${props.locationName} reaches the AWS APIs through interface endpoints in ${region}, but some clusters' secrets or EKS APIs are in ${elsewhere.join(', ')}: those calls need a NAT gateway or an egress proxy.`,
        );
      }
    } else if (endpoints === 'none') {
      this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the AWS APIs (CloudWatch, Secrets Manager, EKS) through NAT');
    } else {
      for (const group of endpoints) this.securityGroup.addEgressRule(group, ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the existing interface endpoints');
    }
  }
}
