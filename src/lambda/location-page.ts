/**
 * A location's page, as its notifier forwards it to the cross-location aggregator (cross-location.ts) instead of
 * publishing it, for a cluster that several locations probe: an EventBridge event on the project's page bus
 * (infra/cross-location.ts). The notifier has already read its own location's evidence (notify.ts), so the event
 * carries the finished page; the aggregator decides whether it goes out for this location or as one page for the
 * cluster.
 */
import { Checker } from '../config/checker.js';
import { DIAGNOSES, type DiagnosisCode } from '../probe/diagnosis-codes.js';

export const LOCATION_PAGE_SOURCE = 'kube-stream-probe';
export const LOCATION_PAGE_DETAIL_TYPE = 'Location page state change';

/** A custom event bus's ARN (EventBridge's format): what the construct's forwardPages and the notifier's routes accept. */
export const EVENT_BUS_ARN = /^arn:aws(-[a-z]+)*:events:[a-z]{2}(-[a-z]+)+-\d:\d{12}:event-bus\/[\w.\-/]+$/;

export interface LocationPage {
  readonly project: string;
  readonly cluster: string;
  readonly location: string;
  /** The location's page alarm: ALARM (kubectl fails from there) or OK again. */
  readonly state: 'ALARM' | 'OK';
  /** When the alarm entered that state (ISO 8601, CloudWatch's timestamp). */
  readonly since: string;
  /** The page as the location's notifier wrote it: subject, and message with its diagnosis and evidence link. */
  readonly subject: string;
  readonly message: string;
  readonly run?: string;
  /** The code of the diagnosis the page names (DIAGNOSES), as a field: the aggregator never reads it out of the subject. */
  readonly diagnosis?: DiagnosisCode;
}

/** An EventBridge event carrying a LocationPage (the fields the aggregator reads), checked. */
export function parseLocationPage(raw: unknown): LocationPage {
  const c = new Checker('');
  const e = c.obj(raw, 'event');
  if (e.source !== LOCATION_PAGE_SOURCE || e['detail-type'] !== LOCATION_PAGE_DETAIL_TYPE)
    c.fail('event', `is ${JSON.stringify(e.source)} / ${JSON.stringify(e['detail-type'])}, not a ${LOCATION_PAGE_SOURCE} "${LOCATION_PAGE_DETAIL_TYPE}"`);
  const d = c.obj(e.detail, 'event.detail');
  for (const k of ['project', 'cluster', 'location', 'since', 'subject', 'message'] as const) c.str(d, k, 'event.detail');
  if (d.state !== 'ALARM' && d.state !== 'OK') c.fail('event.detail.state', 'must be ALARM or OK');
  if (Number.isNaN(Date.parse(d.since as string))) c.fail('event.detail.since', 'must be an ISO 8601 time');
  if (d.run !== undefined && typeof d.run !== 'string') c.fail('event.detail.run', 'must be a string');
  // The notifier forwards only a code of the catalogue (notify.ts): the aggregator takes no other.
  if (d.diagnosis !== undefined && !(typeof d.diagnosis === 'string' && Object.hasOwn(DIAGNOSES, d.diagnosis)))
    c.fail('event.detail.diagnosis', 'must be a diagnosis code (docs/diagnoses.md)');
  return d as unknown as LocationPage;
}

/**
 * The IAM condition that admits only these events on PutEvents: `events:source` and `events:detail-type` are
 * multivalued keys (one value per entry of the call: the Service Authorization Reference types them ArrayOfString),
 * so ForAllValues, with the source required present (ForAllValues alone also matches a request without the key).
 */
export const LOCATION_PAGE_PUT_CONDITION = {
  'ForAllValues:StringEquals': { 'events:source': [LOCATION_PAGE_SOURCE], 'events:detail-type': [LOCATION_PAGE_DETAIL_TYPE] },
  Null: { 'events:source': 'false', 'events:detail-type': 'false' },
} as const;
