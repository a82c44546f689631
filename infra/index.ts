/**
 * `kube-stream-probe/cdk`: the StreamProbe construct (one network location's probe: function, schedules, alarms,
 * dashboard) and its props. aws-cdk-lib and constructs are the app's (peer dependencies).
 */
export { PROBE_RUNTIME, StreamProbe } from './stream-probe.js';
export type { ProbeAlarmOptions, ProbeCluster, ProbeClusterAuth, ProbeSchedule, StreamProbeProps } from './props.js';
export { CrossLocationPaging, type CrossLocationPagingProps } from './cross-location.js';
