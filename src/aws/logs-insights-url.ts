/**
 * A CloudWatch Logs Insights console link that opens a query over a log group and a time range, as Grafana's
 * CloudWatch data source builds its "View in CloudWatch console" links (grafana/grafana,
 * public/app/plugins/datasource/cloudwatch/utils/url.ts: `#logs-insights:queryDetail=` + the query's details in
 * JSURL, github.com/Sage/jsurl). The console runs the query when the link is opened with the Run button; the
 * link holds no secret, only the log group's name, the time range and the query.
 */

/** JSURL's string encoding: word characters, `-` and `.` stay, `$` becomes `!`, the rest `*hh` / `**hhhh`. */
function encodeString(s: string): string {
  return s.replace(/[^\w\-.]/g, (ch) => {
    if (ch === '$') return '!';
    const code = ch.charCodeAt(0);
    return code < 0x100 ? `*${code.toString(16).padStart(2, '0')}` : `**${code.toString(16).padStart(4, '0')}`;
  });
}

type Jsurl = string | number | boolean | null | readonly Jsurl[] | { readonly [k: string]: Jsurl };

/** JSURL stringify (its grammar: `~'string`, `~number`, `~true`, `~(~a~b)` arrays, `~(k~v~k2~v2)` objects). */
export function jsurl(v: Jsurl): string {
  if (v === null) return '~null';
  if (typeof v === 'number') return Number.isFinite(v) ? `~${v}` : '~null';
  if (typeof v === 'boolean') return `~${v}`;
  if (typeof v === 'string') return `~'${encodeString(v)}`;
  if (Array.isArray(v)) return `~(${v.map((x) => jsurl(x)).join('') || '~'})`;
  const entries = Object.entries(v as Record<string, Jsurl>);
  return `~(${entries.map(([k, x]) => `${encodeString(k)}${jsurl(x)}`).join('~')})`;
}

/** JSURL parse (Sage/jsurl's `parse`): the inverse of `jsurl`, for checking a link says what it should. */
export function parseJsurl(s: string): unknown {
  let i = 0;
  const eat = (c: string) => {
    if (s[i] !== c) throw new Error(`jsurl: expected "${c}" at ${i}`);
    i++;
  };
  const decode = (): string => {
    let out = '';
    while (i < s.length && s[i] !== '~' && s[i] !== ')') {
      const ch = s[i]!;
      if (ch === '*') {
        const long = s[i + 1] === '*';
        const width = long ? 4 : 2;
        const from = i + (long ? 2 : 1);
        out += String.fromCharCode(Number.parseInt(s.slice(from, from + width), 16));
        i = from + width;
      } else {
        out += ch === '!' ? '$' : ch;
        i++;
      }
    }
    return out;
  };
  const one = (): unknown => {
    eat('~');
    const ch = s[i];
    if (ch === '(') {
      i++;
      let result: unknown;
      if (s[i] === '~') {
        const arr: unknown[] = [];
        if (s[i + 1] === ')') i++;
        else
          do arr.push(one());
          while (s[i] === '~');
        result = arr;
      } else {
        const obj: Record<string, unknown> = {};
        if (s[i] !== ')')
          do {
            const key = decode();
            obj[key] = one();
          } while (s[i] === '~' && ++i);
        result = obj;
      }
      eat(')');
      return result;
    }
    if (ch === "'") {
      i++;
      return decode();
    }
    const beg = i++;
    while (i < s.length && s[i] !== ')' && s[i] !== '~') i++;
    const word = s.slice(beg, i);
    if (/[\d-]/.test(ch ?? '')) return Number.parseFloat(word);
    const reserved: Record<string, unknown> = { true: true, false: false, null: null };
    if (!(word in reserved)) throw new Error(`jsurl: bad value keyword ${word}`);
    return reserved[word];
  };
  const v = one();
  if (i !== s.length) throw new Error(`jsurl: trailing "${s.slice(i)}"`);
  return v;
}

/** The console's host for a region (GovCloud and China have their own). */
export function consoleHost(region: string): string {
  if (region.startsWith('us-gov-')) return `${region}.console.amazonaws-us-gov.com`;
  if (region.startsWith('cn-')) return `${region}.console.amazonaws.cn`;
  return `${region}.console.aws.amazon.com`;
}

export interface InsightsLink {
  readonly region: string;
  readonly logGroup: string;
  readonly query: string;
  /** A fixed range, or the last `lastSeconds` whenever the link is opened. */
  readonly range: { readonly start: Date; readonly end: Date } | { readonly lastSeconds: number };
}

export function logsInsightsUrl(l: InsightsLink): string {
  const range: Record<string, Jsurl> =
    'lastSeconds' in l.range
      ? { end: 0, start: -l.range.lastSeconds, timeType: 'RELATIVE', unit: 'seconds' }
      : { end: l.range.end.toISOString(), start: l.range.start.toISOString(), timeType: 'ABSOLUTE', tz: 'UTC' };
  const detail = jsurl({ ...range, editorString: l.query, isLiveTail: false, source: [l.logGroup] });
  return `https://${consoleHost(l.region)}/cloudwatch/home?region=${l.region}#logs-insights:queryDetail=${detail}`;
}
