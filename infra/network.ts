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
import { TASK_GATEWAY_SERVICE, neededEndpointServices } from '../src/config/aws-apis.js';
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
  /** A long-hold task runs in these subnets too (with the same security groups): it needs ECR, Logs and S3 as well. */
  readonly taskRunner?: boolean;
  /** With a task runner and endpoints: S3 by its prefix list, through a gateway endpoint in these route tables ('create'). */
  readonly s3Gateway?: { readonly prefixListId: string; readonly routeTableIds: readonly string[] };
}

export class ProbeNetwork extends Construct {
  /** The function's own security group: egress to the API servers and the AWS APIs only. */
  readonly securityGroup: ec2.SecurityGroup;
  /** All the groups the function gets: its own, then the extra ones. */
  readonly securityGroups: ec2.ISecurityGroup[];
  readonly endpoints: ec2.InterfaceVpcEndpoint[] = [];
  /** The S3 gateway endpoint ('create' with a task runner). */
  readonly s3Endpoint?: ec2.CfnVPCEndpoint;
  /** The endpoint services this location relies on (created, or expected to exist): com.amazonaws.REGION.<name>. */
  readonly endpointServices: readonly string[];

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
    const region = Stack.of(this).region;
    this.endpointServices = neededEndpointServices(clusters, { taskRunner: props.taskRunner });
    if (endpoints !== 'none' && props.taskRunner && props.s3Gateway) {
      // ECR's layers come from S3 through the gateway endpoint: its traffic goes to S3's public addresses, which a
      // group without allow-all egress reaches only by the region's S3 prefix list.
      this.securityGroup.addEgressRule(
        ec2.Peer.prefixList(props.s3Gateway.prefixListId),
        ec2.Port.tcp(HTTPS_PORT),
        'HTTPS to S3 (the task image layers) through the gateway endpoint',
      );
    }
    if (endpoints === 'create') {
      const endpointGroup = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
        vpc,
        allowAllOutbound: false,
        description: `kube-stream-probe ${props.locationName}: HTTPS from the probe to its interface endpoints`,
      });
      // The function and the long-hold task both run with this.securityGroups, so one rule admits both.
      endpointGroup.addIngressRule(
        this.securityGroup,
        ec2.Port.tcp(HTTPS_PORT),
        props.taskRunner ? 'HTTPS from the probe function and its long-hold task' : 'HTTPS from the probe function',
      );
      this.securityGroup.addEgressRule(endpointGroup, ec2.Port.tcp(HTTPS_PORT), 'HTTPS to the interface endpoints');
      for (const service of this.endpointServices) {
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
      if (props.taskRunner && props.s3Gateway) {
        this.s3Endpoint = new ec2.CfnVPCEndpoint(this, `Endpoint-${TASK_GATEWAY_SERVICE}`, {
          vpcId: vpc.vpcId,
          serviceName: ec2.GatewayVpcEndpointAwsService.S3.name,
          vpcEndpointType: 'Gateway',
          routeTableIds: [...props.s3Gateway.routeTableIds],
        });
      }
      // An interface endpoint serves its own region only: a secret or cluster elsewhere needs a route out.
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
      // Nothing at synth can see another stack's endpoints: say what this location relies on.
      Annotations.of(this).addInfo(
        `location ${props.locationName} expects existing VPC endpoints in ${region}, reachable through ${endpoints.length} security group(s): interface endpoints ${this.endpointServices.map((s) => `com.amazonaws.${region}.${s}`).join(', ')} (private DNS on)${props.taskRunner ? `, and the S3 gateway endpoint (com.amazonaws.${region}.s3) in the subnets' route tables` : ''}. A missing one makes the probe's calls time out (see README, "Private subnets").`,
      );
    }
  }
}
