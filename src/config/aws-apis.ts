/**
 * The AWS APIs a location's function calls, and so the interface endpoints a
 * private VPC without NAT needs: CloudWatch (`monitoring`, PutMetricData),
 * Secrets Manager (`secretsmanager`, for secret-authenticated clusters) and
 * EKS (`eks`, DescribeCluster for EKS clusters without caData). Not STS: the
 * EKS token is a presigned URL made locally with the role's credentials from
 * the environment. Not Logs: Lambda ships the function's logs itself.
 */
import type { ClusterConfig } from './probe-config.js';

export function neededEndpointServices(clusters: readonly ClusterConfig[]): string[] {
  const services = ['monitoring'];
  if (clusters.some((c) => c.auth.type === 'secret')) services.push('secretsmanager');
  if (clusters.some((c) => c.auth.type === 'eks' && !c.caData)) services.push('eks');
  return services;
}
