/**
 * Rules written once (issue 39): a copy that could drift fails here. Today's kubectl's versions are named by the
 * kubectl model (KUBECTL_CLIENTS) and nowhere else; throughput's unit is the metric contract's, which the
 * exporters and the transfer read; the hop's refusal rules live in upgrade-refusal.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRICS, VALUE_UNIT_BYTES_PER_SECOND } from '../../src/metrics/contract.js';
import { PROMETHEUS_METRICS } from '../../src/metrics/prometheus.js';
import { TODAYS_KUBECTL_LABEL } from '../../src/probe/kubectl-clients.js';
import { mibPerSecond } from '../../src/probe/transfer.js';
import { BYTES_PER_MIB } from '../../src/vocabulary.js';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
const shipped = [...files('src'), ...files('infra'), ...files('functions')];

describe('one source for each rule', () => {
  it("today's kubectl's versions are written only by the kubectl model", () => {
    const label = /1\.31[-–]1\.37/;
    const writers = shipped.filter((f) => label.test(readFileSync(f, 'utf8')));
    expect(writers.sort()).toEqual(['src/probe/kubectl-clients.ts', 'src/probe/kubectl-model.ts']);
    expect(TODAYS_KUBECTL_LABEL).toBe('1.31–1.37');
  });

  it('the hop refusal rules (403/405 by a rule, a stripped upgrade) are written once', () => {
    const ruleStatuses = /status === 403 \|\| [a-z.]*status === 405|upgrade request required\|missing upgrade headers/;
    expect(shipped.filter((f) => ruleStatuses.test(readFileSync(f, 'utf8')))).toEqual(['src/probe/upgrade-refusal.ts']);
  });

  it("throughput's unit is the contract's: MiB/s is 2^20 bytes per second, in the transfer and in Prometheus", () => {
    expect(METRICS.TransferThroughput.valueUnit).toBe('MiB/s');
    expect(VALUE_UNIT_BYTES_PER_SECOND['MiB/s']).toBe(1_048_576);
    expect(BYTES_PER_MIB).toBe(1_048_576);
    // 3 MiB back in 1.5 s is 2 MiB/s, not 2.1 (MB/s) nor 2.0 of anything else.
    expect(mibPerSecond(3 * 1_048_576, 1500)).toBe(2);
    expect(mibPerSecond(3_000_000, 1000)).toBe(2.86);
    expect(PROMETHEUS_METRICS.TransferThroughput.name).toBe('kube_stream_probe_transfer_throughput_bytes_per_second');
    expect(PROMETHEUS_METRICS.TransferThroughput.scale).toBe(1_048_576);
  });
});
