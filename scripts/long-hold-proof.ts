/**
 * The task runner's local proof (issue: holds longer than Lambda allows), run
 * once by hand, outside `npm test`, its result recorded in docs/long-hold.md:
 * the container entry point (functions/task.ts) holds exec sessions for 18
 * minutes through a real haproxy whose idle timeout is 17 minutes, against the
 * emulator, with real AWS SDK clients against the loopback AWS stand-in.
 * kubectl's pings keep their sessions; sessions without pings are cut at the
 * hop's timeout, which is published as IdleTimeout.
 *
 *   npx tsx scripts/long-hold-proof.ts [holdSeconds] [hopTimeoutSeconds]
 */
import { writeFileSync } from 'node:fs';
import { startEmulatorWithKubeconfig } from '../lab/emulator/kubeconfig.js';
import { startHaproxy } from '../lab/real-hops/reverse-proxies.js';
import { startLocalAws } from '../test/helpers/local-aws.js';
import { runTask } from '../functions/task.js';

const hold = Number(process.argv[2] ?? 1080);
const hopTimeout = Number(process.argv[3] ?? 1020);
const TOKEN = 'long-hold-proof-token-0001';
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:long-hold-AbCdEf';

const started = new Date();
const aws = await startLocalAws();
const lab = await startEmulatorWithKubeconfig({ tls: true, token: TOKEN });
const hop = await startHaproxy({ kind: 'tcp', timeoutSeconds: hopTimeout }, Number(lab.emulator.url.port));
aws.secrets.set(SECRET, JSON.stringify({ token: TOKEN, caData: Buffer.from(lab.emulator.tls!.caPem).toString('base64') }));
Object.assign(process.env, {
  AWS_ENDPOINT_URL: aws.url,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIDLOCALTEST0000000',
  AWS_SECRET_ACCESS_KEY: 'local-test-secret-key-not-real',
});
const lines: string[] = [];
try {
  const summary = await runTask(
    {
      KSP_LOCATION_CONFIG: JSON.stringify({
        project: 'ksp',
        location: 'proof',
        region: 'eu-west-1',
        clusters: [
          {
            name: 'lab',
            endpoint: `https://127.0.0.1:${hop.port}`,
            auth: { type: 'secret', secretArn: SECRET },
            target: { namespace: 'default', pod: 'probe-target', port: 8080 },
          },
        ],
      }),
      KSP_EVENT: JSON.stringify({ schedule: 'long', holds: [`${hold}s`], keepalives: ['kubectl', 'none'], operations: ['exec'] }),
      KSP_TASK_SECONDS: String(hold + 300),
    },
    (l) => {
      lines.push(l);
      process.stdout.write(`${l.slice(0, 300)}\n`);
    },
  );
  const puts = aws.puts.flatMap((p) => p.metricData as { MetricName: string; Value: number; Dimensions: { Name: string; Value: string }[] }[]);
  const idle = puts.filter((d) => d.MetricName === 'IdleTimeout').map((d) => `${d.Dimensions.find((x) => x.Name === 'Transport')!.Value} ${d.Value} s`);
  const rows = summary.reports[0]!.results.map(
    (r) =>
      `| ${r.transport} | ${r.keepalive} | ${r.holdSeconds} s | ${r.hold.survived ? 'survived' : `lost at ${r.hold.disconnectSeconds} s (${r.hold.cause}), idle ${r.hold.idleSeconds} s`} | ${r.echoMs ?? '-'} |`,
  );
  const doc = [
    "# The task runner's long hold, through a real hop (local proof)",
    '',
    `Run ${started.toISOString()} → ${new Date().toISOString()} with \`npx tsx scripts/long-hold-proof.ts ${hold} ${hopTimeout}\`: the container entry point`,
    '(`functions/task.ts`, as the ECS Fargate task runs it) against the emulator through haproxy in TCP mode with',
    `\`timeout client/server ${hopTimeout}s\`, exec over both transports, held ${hold} s (longer than a Lambda run can last), with`,
    "kubectl's keepalive and without; metrics through the real AWS SDK to the loopback AWS stand-in.",
    '',
    '| transport | keepalive | hold | outcome | echo after the hold (ms) |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Verdicts: ${summary.reports[0]!.verdicts.map((v) => `${v.keepalive} ${v.holdSeconds} s = ${v.verdict}`).join('; ')}.`,
    `IdleTimeout published: ${idle.join(', ') || 'none'}. PutMetricData calls: ${aws.puts.length}; the run's result line: ${lines.some((l) => l.includes('"msg":"result"')) ? 'written' : 'MISSING'}.`,
    '',
  ].join('\n');
  writeFileSync('docs/long-hold.md', doc);
  process.stdout.write(doc);
} finally {
  await hop.stop();
  await lab.stop();
  await aws.close();
}
