/**
 * The AWS APIs a location's runners call, and so the VPC endpoints private
 * subnets without NAT need.
 *
 * The function and the long-hold task (the probe itself): CloudWatch
 * (`monitoring`, PutMetricData), Secrets Manager (`secretsmanager`, for
 * secret-authenticated clusters) and EKS (`eks`, DescribeCluster for EKS
 * clusters without caData). Not STS: the EKS token is a presigned URL made
 * locally with the role's credentials from the environment. Not Logs for the
 * function: Lambda ships its logs itself.
 *
 * A long-hold task (ECS Fargate) also needs what Fargate does for it before the
 * probe starts, with the task execution role: the image from ECR (`ecr.api` for
 * the authorization token, `ecr.dkr` for the manifest) whose layers ECR serves
 * from S3 (a gateway endpoint in the subnets' route tables), and the `awslogs`
 * driver's CloudWatch Logs (`logs`). "Amazon ECS tasks hosted on Fargate using
 * platform version 1.4.0 or later require both the com.amazonaws.region.ecr.dkr
 * and com.amazonaws.region.ecr.api Amazon ECR VPC endpoints as well as the
 * Amazon S3 gateway endpoint" (docs.aws.amazon.com/AmazonECR/latest/userguide/
 * vpc-endpoints.html); awslogs without NAT needs the logs endpoint
 * (docs.aws.amazon.com/AmazonECS/latest/developerguide/vpc-endpoints.html).
 */
import type { ClusterConfig } from './probe-config.js';

/** The interface endpoint services (com.amazonaws.REGION.<name>) the location needs. */
export function neededEndpointServices(clusters: readonly ClusterConfig[], opts: { readonly taskRunner?: boolean } = {}): string[] {
  const services = ['monitoring'];
  if (clusters.some((c) => c.auth.type === 'secret')) services.push('secretsmanager');
  if (clusters.some((c) => c.auth.type === 'eks' && !c.caData)) services.push('eks');
  if (opts.taskRunner) services.push(...TASK_ENDPOINT_SERVICES);
  return services;
}

/** What Fargate needs to start a task without NAT: ECR's two APIs and CloudWatch Logs (plus the S3 gateway). */
export const TASK_ENDPOINT_SERVICES = ['ecr.api', 'ecr.dkr', 'logs'] as const;

/** The gateway endpoint service ECR's image layers come from. */
export const TASK_GATEWAY_SERVICE = 's3';
