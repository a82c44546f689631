/** ARNs: arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE. */
import { probeError } from '../errors.js';

/** The region a regional resource lives in (a secret is only found there). */
export function regionOfArn(arn: string): string {
  const region = arn.split(':')[3];
  if (!region) throw probeError('CONFIG_INVALID', `${arn} is not an ARN with a region`, { field: 'arn' });
  return region;
}
