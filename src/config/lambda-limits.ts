/**
 * The Lambda runner's time budget, defined once: the construct sizes the
 * function's timeout with it, the config refuses holds that cannot fit, and
 * the handler plans each invocation against it.
 */
import { sessionDeadlineMs } from '../probe/session.js';
import { transferLimitMs } from '../probe/transfer.js';
import { MAX_HOLD_SECONDS } from '../vocabulary.js';
import { WINDOW_MS as PACER_WINDOW_MS } from '../probe/start-pacer.js';

/** Per-node targets probed at once by the Lambda (one wave: more would not fit its time budget). */
export const LAMBDA_MAX_NODES = 16;

/** Lambda's own hard limit on one invocation. */
export const LAMBDA_MAX_SECONDS = 900;
/** The Lambda's connection limits: shorter than the CLI's, so a run fits its schedule. */
export const LAMBDA_CONNECTION_TIMEOUTS = { dialTimeoutMs: 5_000, upgradeTimeoutMs: 10_000 } as const;
export const LAMBDA_ECHO_TIMEOUT_MS = 5_000;
/** Left unused at the end of every invocation, so the handler always returns. */
export const SAFETY_MARGIN_MS = 5_000;
/** Time reserved for PutMetricData and its retries. */
export const PUBLISH_BUDGET_MS = 8_000;
/** Time reserved for credentials (STS presign, Secrets Manager, DescribeCluster). */
export const ACCESS_BUDGET_MS = 5_000;
/**
 * Room for the handler's own start (parsing the event, planning) in the timeout: without it a
 * function sized exactly for its longest hold refuses that hold by a few milliseconds (found by
 * running the handler with the synthesized timeout, test/integration/lambda-cross-region.test.ts).
 */
export const START_SLACK_MS = 2_000;

/**
 * Every AWS SDK client the function makes: a connection must open in 2 s and a request answer in 4 s,
 * with one retry, so a black-holed endpoint (a missing VPC endpoint, a blocked route) costs seconds,
 * not the invocation. The credential and publish budgets above bound the total.
 */
export const AWS_CLIENT_CONFIG = { maxAttempts: 2, requestHandler: { connectionTimeout: 2_000, requestTimeout: 4_000 } } as const;

/**
 * Seconds a run takes beyond its longest hold: looking up the pod, the RBAC preflight, both handshakes, the echoes
 * before and after the hold, publishing. What a run costs (cost.ts) and what a scrape must allow (`serve`): a 0 s
 * hold fits Prometheus' default scrape_timeout (10 s).
 */
export const RUN_OVERHEAD_SECONDS = 5;

/** One Lambda session's own limit once it has dialled, ms. */
function dialledSessionMs(holdSeconds: number): number {
  return sessionDeadlineMs(holdSeconds, LAMBDA_CONNECTION_TIMEOUTS, { echoTimeoutMs: LAMBDA_ECHO_TIMEOUT_MS });
}

/**
 * How long a session holding `holdSeconds` may take from the run's start, ms: its turn from the start pacer
 * (at most its window, start-pacer.ts) and its own limit.
 */
export function lambdaSessionMs(holdSeconds: number): number {
  return PACER_WINDOW_MS + dialledSessionMs(holdSeconds);
}

/**
 * The transfers of one run, ms: they run one after another (each has the path to itself, so the A/B compares
 * transports and not their share of it), each within its session's limit plus its transfer limit, the first
 * after its turn from the pacer.
 */
export function transferChainMs(bytes: number | undefined, sessions: number): number {
  return bytes ? PACER_WINDOW_MS + sessions * (dialledSessionMs(0) + transferLimitMs(bytes)) : 0;
}

/**
 * Seconds one invocation needs whose longest hold is `holdSeconds` (and whose transfers take up to `transferMs`,
 * alongside the holds): the sessions, credentials, publishing, the margin.
 */
export function lambdaRunSeconds(holdSeconds: number, transferMs = 0): number {
  return Math.ceil((START_SLACK_MS + Math.max(lambdaSessionMs(holdSeconds), transferMs) + ACCESS_BUDGET_MS + PUBLISH_BUDGET_MS + SAFETY_MARGIN_MS) / 1000);
}

/** The longest hold the Lambda runner can finish (MAX_HOLD_SECONDS bounds every runner). */
export const LAMBDA_MAX_HOLD_SECONDS = Math.min(MAX_HOLD_SECONDS, LAMBDA_MAX_SECONDS - lambdaRunSeconds(0));

export type Runner = 'lambda' | 'task';
/** The one rule for which runner holds a hold: the Lambda up to LAMBDA_MAX_HOLD_SECONDS, the ECS task above (plan.ts runnerFor). */
export const runnerForHold = (holdSeconds: number): Runner => (holdSeconds > LAMBDA_MAX_HOLD_SECONDS ? 'task' : 'lambda');

/**
 * Holds longer than LAMBDA_MAX_HOLD_SECONDS run as a container task (ECS Fargate, functions/task.ts): up to
 * this long by default (`taskMaxHold`), to verify idle timeouts raised to an hour (nginx 3600 s, Istio's 1 h,
 * an ALB's up to 4000 s).
 */
export const TASK_MAX_HOLD_SECONDS = 2 * 3600;

/** Seconds one task run needs whose longest hold is `holdSeconds` (the Lambda's budget, without its 15-minute cap). */
export function taskRunSeconds(holdSeconds: number, transferMs = 0): number {
  return lambdaRunSeconds(holdSeconds, transferMs);
}
