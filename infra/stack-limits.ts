/**
 * The limits one location's stack meets as its clusters grow (issue 26, "a 50-cluster location"), checked when the
 * construct is built so a location too large is refused naming the prop and the fix, not at deploy:
 * - CloudFormation: at most 500 resources per stack ("CloudFormation quotas", Resources: 500). CDK enforces the
 *   same number when the app synthesizes ("Number of resources in stack … is greater than allowed maximum of
 *   500"), and the tests synthesize the largest location that passes this check through it; this check only says
 *   it earlier, with the fix, and leaves RESOURCE_HEADROOM to the app that holds the construct.
 * - CloudWatch: a composite alarm's rule can include as many as 100 underlying alarms (PutCompositeAlarm API
 *   reference: "The rule expression of a composite alarm can include as many as 100 underlying alarms").
 * Each alarm costs one resource and every cluster adds a dozen or more, so these (not the function: one vCPU
 * paces 1000 session starts, `npm run bench -- scale`) bound the clusters of one location: split a larger
 * network location into several locations with the same vpc and subnets.
 */
import { CfnResource } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { probeError } from '../src/errors.js';

/** As validate.ts's `invalid` (not imported: validate.ts needs the alarms, which need these checks). */
const invalid = (prop: string, rule: string) => probeError('CONFIG_INVALID', `StreamProbe props: ${prop} ${rule}`, { field: prop });

export const CLOUDFORMATION_MAX_RESOURCES = 500;
/** Resources of the stack left for whatever else the app puts in it. */
export const RESOURCE_HEADROOM = 20;
export const COMPOSITE_MAX_ALARMS = 100;

const split = 'split the clusters across locations (several locations can share one vpc and its subnets)';

/** A composite's rule may name at most 100 alarms. */
export function checkCompositeSize(composite: string, alarms: number, perCluster: number, clusters: number): void {
  if (alarms > COMPOSITE_MAX_ALARMS)
    throw invalid(
      'clusters',
      `are ${clusters}: the ${composite} composite alarm would name ${alarms} alarms (${perCluster} per cluster), and CloudWatch allows ${COMPOSITE_MAX_ALARMS} in one composite's rule (at most ${Math.floor(COMPOSITE_MAX_ALARMS / perCluster)} such clusters per location): ${split}`,
    );
}

/** The construct's resources must leave the stack under CloudFormation's 500. */
export function checkResourceCount(scope: Construct, clusters: number): void {
  const count = scope.node.findAll().filter((c) => c instanceof CfnResource).length;
  const allowed = CLOUDFORMATION_MAX_RESOURCES - RESOURCE_HEADROOM;
  if (count > allowed)
    throw invalid(
      'clusters',
      `are ${clusters}: this location's stack would hold ${count} resources (about ${Math.round(count / clusters)} per cluster, mostly alarms), and CloudFormation allows ${CLOUDFORMATION_MAX_RESOURCES} per stack (${RESOURCE_HEADROOM} left to the app): ${split}`,
    );
}
