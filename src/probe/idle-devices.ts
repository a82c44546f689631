/**
 * The devices whose timers cut idle (or long) sessions, as their vendors document them: the fingerprint a measured
 * timeout and behaviour are matched against (idle-bracket.ts for devices that forget flows, diagnosis.ts for the ones
 * that close at their timer). One row per behaviour a product has; `source` is the vendor's page, or where a vendor
 * documents nothing, the report the figure comes from (said so in `source`).
 */

/** What a device does when its timer fires. */
export type IdleBehaviour =
  /** Forgets the flow without a word; the next packet of it is answered with a TCP reset. */
  | 'forgets-reset'
  /** Forgets the flow without a word; the next packet of it is dropped (the sender retransmits until it gives up). */
  | 'forgets-silent'
  /** Ends the connection at its idle timer (FIN, or a reset to both ends). */
  | 'closes'
  /** Ends the connection a fixed time after it began, whatever moves (pings and data alike). */
  | 'lifetime';

export interface IdleDevice {
  readonly product: string;
  /** Its default timeout, s. */
  readonly seconds: number;
  /** What it can be set to, s, when the vendor says. */
  readonly range?: readonly [number, number];
  /** It cannot be changed. */
  readonly fixed?: true;
  readonly behaviour: IdleBehaviour;
  /** How to raise it, or work around it when fixed. */
  readonly fix: string;
  readonly source: string;
}

const KEEPALIVE_BELOW = (s: number) =>
  `keep every flow busier than once per ${s} s (kubectl pings every 5–10 s; clients without pings need TCP keepalive below ${s} s, e.g. net.ipv4.tcp_keepalive_time)`;

export const IDLE_DEVICES: readonly IdleDevice[] = [
  {
    product: 'AWS NAT Gateway',
    seconds: 350,
    fixed: true,
    behaviour: 'forgets-reset',
    fix: `fixed at 350 s: ${KEEPALIVE_BELOW(350)}`,
    source:
      'https://docs.aws.amazon.com/vpc/latest/userguide/nat-gateway-troubleshooting.html ("Internet connection drops after 350 seconds": it returns an RST to the next packet)',
  },
  {
    product: 'AWS Network Load Balancer (TCP listener; TLS listeners: 350 s fixed)',
    seconds: 350,
    range: [60, 6000],
    behaviour: 'forgets-reset',
    fix: 'aws elbv2 modify-listener-attributes --listener-arn ARN --attributes Key=tcp.idle_timeout.seconds,Value=N (60–6000 s; a TLS listener stays at 350 s)',
    source:
      'https://docs.aws.amazon.com/elasticloadbalancing/latest/network/update-idle-timeout.html; network-load-balancers.html#connection-idle-timeout (data after the idle timeout gets a TCP RST)',
  },
  {
    product: 'AWS Network Firewall',
    seconds: 350,
    range: [60, 6000],
    behaviour: 'forgets-silent',
    fix: "the firewall policy's StatefulEngineOptions FlowTimeouts TcpIdleTimeoutSeconds (60–6000 s)",
    source:
      'https://docs.aws.amazon.com/network-firewall/latest/APIReference/API_FlowTimeouts.html ("After the idle timeout passes, data packets are dropped")',
  },
  {
    product: 'EC2 security-group connection tracking on Nitro v6 instances (5 days on earlier ones)',
    seconds: 350,
    range: [60, 432000],
    behaviour: 'forgets-silent',
    fix: "aws ec2 modify-network-interface-attribute --network-interface-id ENI --connection-tracking-specification TcpEstablishedTimeout=N on the node's or the endpoint's interface (60–432000 s)",
    source:
      'https://aws.amazon.com/blogs/networking-and-content-delivery/best-practices-for-tcp-connection-management-on-ec2/ (Nitro v6: 350 s by default); https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/security-group-connection-tracking.html#connection-tracking-timeouts',
  },
  {
    product: 'Azure NAT Gateway',
    seconds: 240,
    range: [240, 7200],
    behaviour: 'forgets-reset',
    fix: 'az network nat gateway update --idle-timeout N (4–120 minutes)',
    source:
      'https://learn.microsoft.com/azure/nat-gateway/nat-gateway-resource#tcp-idle-timeout and #tcp-reset (the flow is dropped silently; a reset is sent only to traffic on the dropped flow)',
  },
  {
    product: 'Azure Load Balancer (default)',
    seconds: 240,
    range: [240, 6000],
    behaviour: 'forgets-silent',
    fix: 'az network lb rule update --idle-timeout N (4–100 minutes) --enable-tcp-reset true (then both ends get a reset at the timeout instead of silence)',
    source: 'https://learn.microsoft.com/azure/load-balancer/load-balancer-tcp-reset ("silently drop flows when the idle timeout of a flow is reached")',
  },
  {
    product: 'Azure Load Balancer with "TCP reset on idle"',
    seconds: 240,
    range: [240, 6000],
    behaviour: 'closes',
    fix: 'az network lb rule update --idle-timeout N (4–100 minutes)',
    source: 'https://learn.microsoft.com/azure/load-balancer/load-balancer-tcp-reset (bidirectional TCP resets at the idle timeout)',
  },
  {
    product: 'GCP VPC firewall connection tracking',
    seconds: 600,
    fixed: true,
    behaviour: 'forgets-silent',
    fix: `not configurable: ${KEEPALIVE_BELOW(600)}`,
    source: 'https://cloud.google.com/firewall/docs/firewalls#specifications (established TCP connections are tracked for 10 minutes of inactivity)',
  },
  {
    product: 'GCP Cloud NAT',
    seconds: 1200,
    behaviour: 'forgets-silent',
    fix: 'gcloud compute routers nats update NAT --router=ROUTER --tcp-established-idle-timeout=Ns',
    source: 'https://cloud.google.com/nat/docs/tune-nat-configuration (TCP established connection idle timeout, 1200 s by default)',
  },
  {
    product: 'GCP external Application Load Balancer (backend service timeout)',
    seconds: 30,
    behaviour: 'lifetime',
    fix: 'gcloud compute backend-services update SERVICE --timeout=N (on GKE: a BackendConfig with timeoutSec): for WebSocket it is the longest a connection may stay open, pings or not',
    source:
      'https://cloud.google.com/load-balancing/docs/backend-service#timeout-setting (for WebSocket traffic the backend service timeout is the maximum time a WebSocket can stay open, idle or not)',
  },
  {
    product: 'AWS Application Load Balancer',
    seconds: 60,
    range: [1, 4000],
    behaviour: 'closes',
    fix: 'aws elbv2 modify-load-balancer-attributes --load-balancer-arn ARN --attributes Key=idle_timeout.timeout_seconds,Value=N (1–4000 s)',
    source: 'https://docs.aws.amazon.com/elasticloadbalancing/latest/application/application-load-balancers.html#connection-idle-timeout',
  },
  {
    product: "nginx (proxy_read_timeout's default)",
    seconds: 60,
    behaviour: 'closes',
    fix: 'proxy_read_timeout and proxy_send_timeout in the location that proxies the API server (e.g. 3600s)',
    source: 'https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_read_timeout',
  },
  {
    product: 'Cloudflare proxy (WebSocket inactivity, reported)',
    seconds: 100,
    fixed: true,
    behaviour: 'closes',
    fix: `not configurable below the Enterprise plan: ${KEEPALIVE_BELOW(100)}`,
    source:
      'reported, not in Cloudflare\'s docs: buildbot/buildbot#4078 and community.cloudflare.com/t/cloudflare-websocket-timeout/5865 ("resetting websockets with 100 seconds of inactivity")',
  },
  {
    product: 'Amazon API Gateway WebSocket API (idle)',
    seconds: 600,
    fixed: true,
    behaviour: 'closes',
    fix: `fixed at 10 minutes: ${KEEPALIVE_BELOW(600)}`,
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html (idle connection timeout 10 minutes)',
  },
  {
    product: 'Amazon API Gateway WebSocket API (connection duration)',
    seconds: 7200,
    fixed: true,
    behaviour: 'lifetime',
    fix: 'fixed at 2 hours: reconnect before it',
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html (connection duration 2 hours)',
  },
  {
    product: "the kubelet's streaming idle timeout",
    seconds: 4 * 3600,
    behaviour: 'closes',
    fix: 'the kubelet configuration\'s streamingConnectionIdleTimeout (default "4h")',
    source: 'https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/ (streamingConnectionIdleTimeout)',
  },
];

/** How far a measured figure may sit from a documented one and still be it: timers and our 0.1 s sampling. */
const tolerance = (seconds: number) => Math.max(1, seconds * 0.03);

/** Devices that behave so with a default timer at `seconds` (a hop's own timer, measured exactly). */
export function devicesAt(behaviour: IdleBehaviour, seconds: number): IdleDevice[] {
  return IDLE_DEVICES.filter((d) => d.behaviour === behaviour && Math.abs(d.seconds - seconds) <= tolerance(d.seconds));
}

/** Devices that behave so with a default timer inside (above, atMost]: the bracket a forgotten flow was measured in. */
export function devicesWithin(behaviour: IdleBehaviour, above: number, atMost: number): IdleDevice[] {
  return IDLE_DEVICES.filter((d) => d.behaviour === behaviour && d.seconds > above - tolerance(d.seconds) && d.seconds <= atMost + tolerance(d.seconds));
}

/** The documented timeouts of devices that forget flows: where a bracket's ladder puts a rung just below. */
export function forgettingTimeouts(): number[] {
  return [...new Set(IDLE_DEVICES.filter((d) => d.behaviour.startsWith('forgets')).map((d) => d.seconds))].sort((a, b) => a - b);
}

/** "AWS NAT Gateway (350 s, fixed), AWS Network Load Balancer (350 s by default, 60–6000 s)". */
export function deviceList(devices: readonly IdleDevice[]): string {
  return devices
    .map((d) => `${d.product} (${d.seconds} s${d.fixed ? ', fixed' : d.range ? ` by default, ${d.range[0]}–${d.range[1]} s` : ' by default'})`)
    .join(', ');
}

/** The documented timers under an hour, s: where a chart of disconnect times draws its lines (dashboards, the report). */
export const IDLE_MARK_SECONDS: readonly number[] = [...new Set(IDLE_DEVICES.map((d) => d.seconds).filter((s) => s < 3600))].sort((a, b) => a - b);
