/**
 * Alarms by what they mean, not by what was measured:
 *
 * - PAGE, one composite per location × cluster: today's kubectl is broken here. Its components are the
 *   KubectlWorks alarms per operation (the kubectl model over keepalive-`kubectl` sessions: an upgrade
 *   failure kubectl does not fall back from, or a session that dies during a hold). An unreachable
 *   cluster is one page, not one per metric.
 * - TICKET, composites per location: GA readiness (SilentFallback: works today only through the
 *   fallback, which kubectl 1.38 (KEP-4006 GA) keeps but can no longer be overridden, and which WebSocket-only
 *   clients never had), nodes (clusters probed per node: NodesFailing ≥ 1 for an operation ×
 *   transport, i.e. streaming to pods on some nodes fails; which nodes is in the function's `per-node`
 *   log line) and probe health (per cluster "not measured or not reporting": ProbeError, published by
 *   every run that reaches the cluster, with missing data breaching; per-node probing that finds no
 *   node; PublishFailures, the function's Errors, Throttles and Duration near its timeout, Scheduler
 *   target errors and dropped invocations); transfers (schedules with `transfer`: TransferComplete < 1 for an
 *   operation × transport whose UpgradeSuccess alarm is not in ALARM, i.e. small sessions work and bulk
 *   transfers do not: `kubectl cp` loses its tail, hangs or is cut).
 * - COMPONENTS that notify no one, for the dashboard's alarm panel: UpgradeSuccess per operation ×
 *   transport (missing data breaching: the probe did not run), HoldSurvived per kubectl-keepalive hold.
 * - MEASURED ONLY: holds without pings. They measure a path's idle timeout (published as IdleTimeout);
 *   NAT gateways, NLBs and VPC endpoints cut idle flows at a fixed 350 s, so alarming on them would keep
 *   ordinary AWS paths in ALARM for good. `ticketHoldsWithoutPings` makes them tickets.
 *
 * Missing data is not breaching for everything else (a hold metric is missing when its upgrade failed,
 * which UpgradeSuccess already says). Periods hold two runs of the schedules that publish each metric
 * (src/config/schedule.ts), so a path failing every other run stays in ALARM instead of flapping; the
 * alarm-storm test (test/infra/alarm-storm.test.ts) replays such histories and counts notifications.
 */
import { TODAYS_KUBECTL_LABEL } from '../src/probe/kubectl-clients.js';
import { Duration, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { alarmPeriodSeconds, scheduleIntervalSeconds } from '../src/config/schedule.js';
import { OPERATIONS, TRANSPORTS, formatSize, type Operation, type RunPlan, type Transport } from '../src/vocabulary.js';
import { functionHealthAlarms } from './health-alarms.js';
import { checkCompositeSize } from './stack-limits.js';
import { transfersTicket, type TransferPair } from './transfer-ticket.js';
import { probeMetric } from './metrics.js';
import { burnAlarms } from './slo-alarms.js';
import { BURN_WINDOWS, objectiveText, windowText } from '../src/metrics/slo.js';
import { FLAPPING_TICKET_RUNS } from '../src/metrics/contract.js';
import { recentEvidenceLink } from '../src/lambda/evidence-log.js';
import type { NotifiedAlarm } from './notifier.js';

/** The tickets the notifier sends (with the newest failed run's diagnosis); the rest notify their topic directly. */
const NOTIFIED_TICKETS: readonly string[] = ['ticket/ga-readiness', 'ticket/flapping'];

/** Stand-ins replaced by tokens after the link is encoded (both are JSURL-safe words, so encoding leaves them whole). */
const LOG_GROUP_MARK = 'kspLogGroupMark';
/** CloudWatch's limit on an alarm's description, and what the log group's generated name may add to a link. */
const ALARM_DESCRIPTION_MAX_CHARS = 1024;
const EVIDENCE_LOG_GROUP_CHARS = 160;
const REGION_MARK = 'kspRegionMark';

/** A schedule as the alarms see it: when it runs and its plan. */
export interface AlarmedSchedule extends RunPlan {
  readonly expression: string;
}

export interface ProbeAlarmsProps {
  readonly project: string;
  readonly locationName: string;
  readonly clusterNames: readonly string[];
  /** Clusters probed node by node (target.perNode): they get the nodes alarms. @default none */
  readonly perNodeClusters?: readonly string[];
  readonly schedules: readonly AlarmedSchedule[];
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly ticketHoldsWithoutPings: boolean;
  /** The upgrade SLO's objective (src/metrics/slo.ts): its burn-rate alarms join each cluster's page. */
  readonly sloObjective: number;
  readonly fn: lambda.IFunction;
  /**
   * The function's log group: each page's and ticket's description links its recent evidence lines. A name
   * CloudFormation generates (stack, logical id, suffix: letters, digits and "-") needs no escaping in the link.
   */
  readonly logGroupName: string;
  readonly timeout: Duration;
  readonly scheduleGroupName: string;
  readonly pageTopic: sns.ITopic;
  readonly ticketTopic: sns.ITopic;
}

export class ProbeAlarms extends Construct {
  /** Every alarm by a stable key: `page/<cluster>`, `upgrade/<cluster>/<op>/<transport>`, `kubectl/<cluster>/<op>`… */
  readonly byKey = new Map<string, cloudwatch.IAlarm>();
  /** The paging composites, one per cluster. */
  readonly pages: cloudwatch.CompositeAlarm[] = [];
  /** The ticketing alarms (composites, and hold tickets when asked for). */
  readonly tickets: cloudwatch.IAlarm[] = [];
  /** The alarms the notifier speaks for (infra/notifier.ts): the pages, and the tickets with evidence. */
  readonly notified: NotifiedAlarm[] = [];

  /** The alarms' components, gathered per cluster, that the location's tickets combine. */
  private readonly fallbacks: cloudwatch.IAlarm[] = [];
  /** Per cluster × operation × transport with a transfer: its TransferComplete alarm and its UpgradeSuccess alarm. */
  private readonly transfers: TransferPair[] = [];
  private readonly nodes: cloudwatch.IAlarm[] = [];
  private readonly health: cloudwatch.IAlarm[] = [];
  private readonly flapping: cloudwatch.IAlarm[] = [];
  private readonly ticket: cwActions.SnsAction;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ProbeAlarmsProps,
  ) {
    super(scope, id);
    this.ticket = new cwActions.SnsAction(props.ticketTopic);
    for (const cluster of props.clusterNames) this.clusterAlarms(cluster);
    this.flapping.push(this.flappingAlarm());
    this.functionHealth();
    this.ticketComposites();
  }

  /** The Logs Insights link to the recent evidence of one cluster (a page) or of every cluster (a ticket). */
  private evidenceUrl(cluster?: string): string {
    const region = Stack.of(this).region;
    const known = !Token.isUnresolved(region);
    const url = recentEvidenceLink({ region: known ? region : REGION_MARK, logGroup: LOG_GROUP_MARK, cluster });
    return (known ? url : url.replaceAll(REGION_MARK, region)).replace(LOG_GROUP_MARK, this.props.logGroupName);
  }

  /**
   * The sentence with the evidence link, when it fits CloudWatch's 1024 characters of description beside the rest
   * (the log group's generated name counted at EVIDENCE_LOG_GROUP_CHARS); else a pointer to the same query.
   */
  private withEvidence(description: string, cluster?: string): string {
    const sentence = ` What the wire showed, newest run first, with each failed session's diagnosis: ${this.evidenceUrl(cluster)}`;
    const literal = (description + sentence).replace(/\$\{Token\[[^\]]*\]\}/g, '');
    return literal.length + EVIDENCE_LOG_GROUP_CHARS <= ALARM_DESCRIPTION_MAX_CHARS
      ? description + sentence
      : `${description} What the wire showed: Logs Insights on the function's log group, filter msg = "evidence" (README, "Evidence").`;
  }

  /** `<project>-<location>-<parts…>`: every alarm's name. */
  private name(...parts: (string | number)[]): string {
    return [this.props.project, this.props.locationName, ...parts].join('-');
  }

  /** One cluster's alarms: per operation and transport, kubectl's, the fallback's, its nodes', its not-measured; and its page. */
  private clusterAlarms(cluster: string): void {
    const p = this.props;
    const kubectl: cloudwatch.IAlarm[] = [];
    const kubectlOps: string[] = [];
    for (const op of OPERATIONS) {
      const covering = p.schedules.filter((s) => s.operations.includes(op));
      if (covering.length === 0) continue;
      for (const transport of TRANSPORTS) this.transportAlarms(cluster, op, transport, covering);
      kubectlOps.push(op);
      kubectl.push(this.kubectlAlarm(cluster, op, covering));
      this.fallbacks.push(this.fallbackAlarm(cluster, op, covering));
    }
    if (p.perNodeClusters?.includes(cluster)) this.nodeAlarms(cluster, (...parts) => this.name(...parts), this.nodes, this.health);
    const burns = burnAlarms({
      cluster,
      location: p.locationName,
      objective: p.sloObjective,
      name: (...parts) => this.name(...parts),
      alarm: (key, props) => this.alarm(key, props),
    });
    this.health.push(
      this.alarm(`probe-error/${cluster}`, {
        alarmName: this.name(cluster, 'not-measured'),
        alarmDescription: `The probe could not measure ${cluster} from ${p.locationName} (its credentials, target or port: see the function's log for the reason and the fix), or it stopped reporting (see the function's errors and the Scheduler).`,
        metric: probeMetric('ProbeError', { Location: p.locationName, Cluster: cluster }, { statistic: 'Maximum', period: this.period(p.schedules) }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // Every run that gets as far as the cluster publishes it (0 when it measured): missing means not reporting.
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      }),
    );
    const composite = new cloudwatch.CompositeAlarm(this, `Page-${cluster}`, {
      compositeAlarmName: this.name(cluster, 'PAGE'),
      alarmDescription: this.withEvidence(
        `PAGE: kubectl ${kubectlOps.join(' or ')} is broken from ${p.locationName} to ${cluster} (today's kubectl, ${TODAYS_KUBECTL_LABEL}, with its keepalive), or its upgrades burn the ${objectiveText(p.sloObjective)} SLO's error budget (${BURN_WINDOWS.map((w) => `${w.burnRate}x over ${windowText(w.longSeconds)} and ${windowText(w.shortSeconds)}`).join('; ')}). The dashboard ${this.name()} shows which operation and transport.`,
        cluster,
      ),
      alarmRule: cloudwatch.AlarmRule.anyOf(...kubectl.map((a) => cloudwatch.AlarmRule.fromAlarm(a, cloudwatch.AlarmState.ALARM)), ...burns.map((b) => b.rule)),
    });
    // Through the notifier (infra/notifier.ts): the page carries its run's diagnosis and evidence link.
    this.notified.push({ alarm: composite, name: this.name(cluster, 'PAGE'), severity: 'PAGE', cluster, onOk: true });
    this.pages.push(composite);
    this.byKey.set(`page/${cluster}`, composite);
  }

  private dims(cluster: string, op: string) {
    return { Location: this.props.locationName, Cluster: cluster, Operation: op };
  }

  /** One operation over one transport: its UpgradeSuccess alarm, its transfer's, its holds'. */
  private transportAlarms(cluster: string, op: Operation, transport: Transport, covering: readonly AlarmedSchedule[]): void {
    const p = this.props;
    const dims = { ...this.dims(cluster, op), Transport: transport };
    const upgrade = this.alarm(`upgrade/${cluster}/${op}/${transport}`, {
      alarmName: this.name(cluster, op, transport, 'upgrade'),
      alarmDescription: `${transport} ${op} to ${cluster} from ${p.locationName} did not upgrade and echo in ${p.datapointsToAlarm} of ${p.evaluationPeriods} periods, or the probe stopped reporting. Shown on the dashboard; it notifies no one (kubectl may still work through its fallback: KubectlWorks decides the page).`,
      metric: probeMetric('UpgradeSuccess', dims, { statistic: 'Minimum', period: this.period(covering) }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    const transferCovering = covering.filter((s) => s.transferBytes);
    if (transferCovering.length) {
      const sizes = [...new Set(transferCovering.map((s) => formatSize(s.transferBytes ?? 0)))].join(', ');
      this.transfers.push({
        upgrade,
        transfer: this.alarm(`transfer/${cluster}/${op}/${transport}`, {
          alarmName: this.name(cluster, op, transport, 'transfer'),
          alarmDescription: `A ${sizes} transfer through ${transport} ${op} to ${cluster} from ${p.locationName} did not come back whole (a lost tail, a stall, a cut or a corruption) in ${p.datapointsToAlarm} of ${p.evaluationPeriods} periods: \`kubectl cp\` breaks on this path. The function's verdict log line says which (transfer-tail-lost, transfer-stalled, transfer-cut, transfer-slow).`,
          metric: probeMetric('TransferComplete', dims, { statistic: 'Minimum', period: this.period(transferCovering) }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
          // Missing when the upgrade itself failed, which UpgradeSuccess (and the page) already say.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      });
    }
    for (const keepalive of ['kubectl', 'none'] as const) {
      if (keepalive === 'none' && !p.ticketHoldsWithoutPings) continue;
      const withKeepalive = covering.filter((s) => s.keepalives.includes(keepalive));
      for (const hold of [...new Set(withKeepalive.flatMap((s) => s.holdsSeconds))].filter((h) => h > 0)) {
        const a = this.alarm(`hold/${cluster}/${op}/${transport}/${keepalive}/${hold}`, {
          alarmName: this.name(cluster, op, transport, keepalive, `hold${hold}s`),
          alarmDescription: `${transport} ${op} to ${cluster} did not survive a ${hold} s idle hold with keepalive "${keepalive}".${keepalive === 'none' ? " Holds without pings measure the path's idle timeout (see IdleTimeout)." : ' A component; KubectlWorks decides whether kubectl itself is broken.'}`,
          metric: probeMetric(
            'HoldSurvived',
            { ...dims, Keepalive: keepalive, HoldSeconds: String(hold) },
            { statistic: 'Minimum', period: this.period(withKeepalive.filter((s) => s.holdsSeconds.includes(hold))) },
          ),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
        if (keepalive === 'none') {
          a.addAlarmAction(this.ticket);
          this.tickets.push(a);
        }
      }
    }
  }

  private kubectlAlarm(cluster: string, op: Operation, covering: readonly AlarmedSchedule[]): cloudwatch.Alarm {
    return this.alarm(`kubectl/${cluster}/${op}`, {
      alarmName: this.name(cluster, op, 'kubectl-broken'),
      alarmDescription: `kubectl ${op} (${TODAYS_KUBECTL_LABEL}, with its keepalive) fails from ${this.props.locationName} to ${cluster}: an upgrade failure it does not fall back from, or a session that dies during a hold.`,
      metric: probeMetric('KubectlWorks', this.dims(cluster, op), { statistic: 'Minimum', period: this.period(covering) }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * Flapping, per location: cluster-runs in which a session failed and then worked on its retry (probe/retry.ts),
   * FLAPPING_TICKET_RUNS of them within an hour (or three of the densest schedule's runs, when it runs less often): a
   * ticket, never a page.
   */
  private flappingAlarm(): cloudwatch.Alarm {
    const p = this.props;
    const densest = Math.min(...p.schedules.map((s) => scheduleIntervalSeconds(s.expression)));
    const window = Math.max(3600, FLAPPING_TICKET_RUNS * densest);
    return this.alarm('flapping', {
      alarmName: this.name('flapping-runs'),
      alarmDescription: `Sessions from ${p.locationName} failed and then worked when tried again a moment later, in ${FLAPPING_TICKET_RUNS} or more runs within ${windowText(window)}: a path that drops an upgrade now and then (a load balancer's unhealthy target, a proxy restarting). Counted as working; the runs' evidence lines (msg "evidence", attempt "first") name the cluster and what each failed attempt met.`,
      metric: probeMetric('Flapping', { Location: p.locationName }, { statistic: 'Sum', period: Duration.seconds(window) }),
      threshold: FLAPPING_TICKET_RUNS,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  private fallbackAlarm(cluster: string, op: Operation, covering: readonly AlarmedSchedule[]): cloudwatch.Alarm {
    return this.alarm(`fallback/${cluster}/${op}`, {
      alarmName: this.name(cluster, op, 'silent-fallback'),
      alarmDescription: `kubectl ${op} to ${cluster} works from ${this.props.locationName} only through its silent fallback to SPDY: WebSocket-only clients (browser terminals, SDKs) fail there now, and from kubectl 1.38 (KEP-4006 GA) SPDY can no longer be forced.`,
      metric: probeMetric('SilentFallback', this.dims(cluster, op), { statistic: 'Maximum', period: this.period(covering) }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** The probe's own health: publishing, the function, the Scheduler (health-alarms.ts). */
  private functionHealth(): void {
    const p = this.props;
    for (const h of functionHealthAlarms(p, (...parts) => this.name(...parts), Duration.seconds(this.period(p.schedules).toSeconds())))
      this.health.push(
        this.alarm(h.key, {
          alarmName: h.alarmName,
          alarmDescription: h.description,
          metric: h.metric,
          threshold: h.threshold,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          evaluationPeriods: 1,
          datapointsToAlarm: 1,
        }),
      );
  }

  /** The location's tickets: transfers, GA readiness, nodes, probe health; each a composite of its components. */
  private ticketComposites(): void {
    const clusterCount = this.props.clusterNames.length;
    const { transfers, ticket } = this;
    if (transfers.length) {
      checkCompositeSize('transfers ticket', 2 * transfers.length, (2 * transfers.length) / clusterCount, clusterCount);
      const composite = transfersTicket(this, this.name('transfers'), transfers);
      this.notified.push({ alarm: composite, name: this.name('transfers'), severity: 'TICKET', onOk: false });
      this.tickets.push(composite);
      this.byKey.set('ticket/transfers', composite);
    }
    for (const [key, components, label] of [
      [
        'ticket/ga-readiness',
        this.fallbacks,
        'GA readiness: kubectl works only through its silent fallback to SPDY on some paths: a hop refuses WebSocket. WebSocket-only clients (browser terminals, SDKs, client-go >= 0.36 tools) fail there now; kubectl 1.38 (KEP-4006 GA) still falls back but ignores KUBECTL_*_WEBSOCKETS, so SPDY can no longer be forced.',
      ],
      [
        'ticket/nodes',
        this.nodes,
        'Nodes: exec or port-forward fails to pods on some nodes of a cluster (the others work): the function\'s log line msg "per-node" names them and says what sets them apart (kubelet version, WebSocket passthrough).',
      ],
      ['ticket/probe-health', this.health, 'Probe health: the probe could not measure, publish or run as it should (see which component is in ALARM).'],
      [
        'ticket/flapping',
        this.flapping,
        'Flapping: sessions fail and then work when tried again, run after run, on some paths: never a page (the retry absorbed each), but a hop that drops upgrades now and then. The evidence lines of the failed attempts name it.',
      ],
    ] as const) {
      if (components.length === 0) continue;
      checkCompositeSize(`${key.split('/')[1]} ticket`, components.length, Math.ceil(components.length / clusterCount), clusterCount);
      const composite = new cloudwatch.CompositeAlarm(this, key.replace('/', '-'), {
        compositeAlarmName: this.name(key.split('/')[1]!),
        alarmDescription: key === 'ticket/probe-health' ? `TICKET, ${label}` : this.withEvidence(`TICKET, ${label}`),
        alarmRule: cloudwatch.AlarmRule.anyOf(...components.map((a) => cloudwatch.AlarmRule.fromAlarm(a, cloudwatch.AlarmState.ALARM))),
      });
      // Tickets whose cause is in the evidence lines go through the notifier; the probe's own health and the nodes'
      // (per-node results have no evidence lines) are CloudWatch's own message, and reach the topic even when the
      // notifier does not.
      if (NOTIFIED_TICKETS.includes(key)) this.notified.push({ alarm: composite, name: this.name(key.split('/')[1]!), severity: 'TICKET', onOk: false });
      else composite.addAlarmAction(ticket);
      this.tickets.push(composite);
      this.byKey.set(key, composite);
    }
  }

  /**
   * A cluster probed per node: one alarm per operation × transport on NodesFailing (missing data is not
   * breaching: a run that could not probe nodes says so below), and one probe-health alarm when per-node
   * probing finds no node to probe (NodesProbed 0: the DaemonSet is not deployed, its label does not match,
   * or the role cannot list pods; src/metrics/datums.ts). Every run probes every operation × transport of its
   * schedule on the nodes, so one metric of the first operation stands for "nodes were probed".
   */
  private nodeAlarms(cluster: string, name: (...parts: (string | number)[]) => string, nodes: cloudwatch.IAlarm[], health: cloudwatch.IAlarm[]): void {
    const p = this.props;
    const dims = (op: string, transport: string) => ({ Location: p.locationName, Cluster: cluster, Operation: op, Transport: transport });
    let first: { op: Operation; covering: AlarmedSchedule[] } | undefined;
    for (const op of OPERATIONS) {
      const covering = p.schedules.filter((s) => s.operations.includes(op));
      if (covering.length === 0) continue;
      first ??= { op, covering };
      for (const transport of TRANSPORTS) {
        nodes.push(
          this.alarm(`nodes/${cluster}/${op}/${transport}`, {
            alarmName: name(cluster, op, transport, 'nodes-failing'),
            alarmDescription: `${transport} ${op} fails from ${p.locationName} to the per-node targets on some nodes of ${cluster}: the function's log line msg "per-node" names them and what sets them apart; \`kube-stream-probe run --per-node\` shows it ad hoc.`,
            metric: probeMetric('NodesFailing', dims(op, transport), { statistic: 'Maximum', period: this.period(covering) }),
            threshold: 1,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
        );
      }
    }
    if (!first) return;
    health.push(
      this.alarm(`nodes-probed/${cluster}`, {
        alarmName: name(cluster, 'no-nodes-probed'),
        alarmDescription: `Per-node probing of ${cluster} from ${p.locationName} found no node to probe: check that the targets of \`kube-stream-probe manifest --per-node\` run (label app.kubernetes.io/name=kube-stream-probe-node) and that the probe's role may list pods and get nodes; the function's log line msg "per-node" has the error.`,
        metric: probeMetric('NodesProbed', dims(first.op, 'spdy'), { statistic: 'Maximum', period: this.period(first.covering) }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        // Published as 0 when the API server answered but nothing could be probed; missing when it could not be
        // reached (the page says so) or the probe did not run (ProbeError says so).
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /** Every alarm, components first. */
  get all(): cloudwatch.IAlarm[] {
    return [...this.byKey.values()];
  }

  private alarm(key: string, a: Omit<cloudwatch.AlarmProps, 'evaluationPeriods'> & { evaluationPeriods?: number }): cloudwatch.Alarm {
    if (this.byKey.has(key)) throw new Error(`alarm key ${key} is used twice`);
    const alarm = new cloudwatch.Alarm(this, key.replace(/\//g, '-'), {
      evaluationPeriods: this.props.evaluationPeriods,
      datapointsToAlarm: this.props.datapointsToAlarm,
      ...a,
    });
    this.byKey.set(key, alarm);
    return alarm;
  }

  /** The period in which every window holds a run of the densest of these schedules. */
  private period(schedules: readonly AlarmedSchedule[]): Duration {
    return Duration.seconds(alarmPeriodSeconds(Math.min(...schedules.map((s) => scheduleIntervalSeconds(s.expression)))));
  }
}
