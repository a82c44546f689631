/** Report formats and where they go (`-o`, `--out`), shared by run, demo and invoke. */
import { writeFileSync } from 'node:fs';
import { probeError, errorCodeOf } from '../errors.js';
import type { SecretRedactor } from '../kube/secrets.js';
import { htmlReport, type ReportEntry } from '../report/html.js';
import { oneOf } from './args.js';
import type { CommandIO } from './io.js';

export const OUTPUT_FORMATS = ['table', 'json', 'html'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const OUTPUT_HELP = `  -o, --output FORMAT   table | json | html (html: one self-contained file with plots, for the
                        upgrade meeting; best with --out)
  --out FILE            write the report to FILE instead of stdout`;

export function outputFormat(value: string | undefined): OutputFormat {
  return oneOf('output', value, OUTPUT_FORMATS, 'table');
}

/** The report in `format`; `table` is rendered by the caller. Every text passes the redactor. */
export function renderStructured(format: 'json' | 'html', entries: readonly ReportEntry[], json: unknown, redactor: SecretRedactor): string {
  return redactor.redact(format === 'json' ? JSON.stringify(json, null, 2) + '\n' : htmlReport(entries));
}

/** To `--out FILE` (saying so on stderr), or stdout. */
export function emit(io: CommandIO, text: string, out: string | undefined): void {
  if (!out) {
    io.out(text);
    return;
  }
  try {
    writeFileSync(out, text);
  } catch (err) {
    throw probeError('USAGE', `--out: ${out} cannot be written (${errorCodeOf(err) ?? 'error'})`, { field: 'out' }, err);
  }
  io.err(`report written to ${out} (${Buffer.byteLength(text)} bytes)\n`);
}
