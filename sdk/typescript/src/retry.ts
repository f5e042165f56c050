// The retry policy, as the Go SDK's (sdk/retry.go): what is retried, after how long, how often.

import type { ReftrackError } from "./errors.js";

/** Bounds the SDK's retries. Fields left out take the defaults of {@link defaultRetryPolicy}. */
export interface RetryPolicy {
  /** Every request counts, the first included (1 = no retries). Default 4. */
  maxAttempts?: number | undefined;
  /** The first wait after a 5xx or a network failure, in milliseconds; each later wait doubles, with
   * jitter. Default 250. */
  minBackoffMs?: number | undefined;
  /** The cap of one wait, in milliseconds. Default 5000. */
  maxBackoffMs?: number | undefined;
  /** The longest `Retry-After` a 429 may ask for and still be retried, in milliseconds; a longer one is
   * returned to the caller. Default 60000 (the rate-limit window). */
  maxRetryAfterMs?: number | undefined;
}

/** What a client uses unless told otherwise: 4 attempts, backoff from 250 ms doubling to 5 s, a 429
 * retried after a `Retry-After` of up to 60 s. */
export const defaultRetryPolicy: Readonly<Required<RetryPolicy>> = Object.freeze({
  maxAttempts: 4,
  minBackoffMs: 250,
  maxBackoffMs: 5000,
  maxRetryAfterMs: 60_000,
});

/** The policy that sends every request once. */
export const noRetry: Readonly<RetryPolicy> = Object.freeze({ maxAttempts: 1 });

export function withDefaults(p: RetryPolicy | false | undefined): Required<RetryPolicy> {
  if (p === false) return { ...defaultRetryPolicy, maxAttempts: 1 };
  const d = defaultRetryPolicy;
  const pick = (v: number | undefined, def: number) => (v !== undefined && Number.isFinite(v) && v > 0 ? v : def);
  return {
    maxAttempts: Math.floor(pick(p?.maxAttempts, d.maxAttempts)),
    minBackoffMs: pick(p?.minBackoffMs, d.minBackoffMs),
    maxBackoffMs: pick(p?.maxBackoffMs, d.maxBackoffMs),
    maxRetryAfterMs: pick(p?.maxRetryAfterMs, d.maxRetryAfterMs),
  };
}

/** The wait before retry n (1 = the first retry), in milliseconds: exponential, capped, with jitter (half
 * the wait, at random) so that many clients failing together do not retry together. */
export function backoff(p: Required<RetryPolicy>, n: number, random: () => number = Math.random): number {
  let d = p.minBackoffMs;
  for (let i = 1; i < n && d < p.maxBackoffMs; i++) d *= 2;
  d = Math.min(d, p.maxBackoffMs);
  return d / 2 + random() * (d / 2);
}

/** The one 500 the interface says never to retry: the transaction id is consumed. */
export const noRetryMessage = "Failed to create commission";

/** One attempt's outcome, as the retry decision sees it. */
export interface Attempt {
  status: number;
  error: ReftrackError | null;
  /** A network failure worth another attempt (see {@link transient}). */
  transient: boolean;
}

/**
 * Decides whether the outcome a of attempt n is retried, and after how many milliseconds (null: not
 * retried).
 *
 * Retried: a 429 (it was refused before reaching the endpoint) after its Retry-After, a 500, 502, 503 or
 * 504 other than "Failed to create commission", and a network failure when the call allows it. Every
 * track call is safe to resend: a sale keeps its transaction_id (a resent sale that was recorded answers
 * 409), a resent lead that was recorded answers 400 "Customer status cannot be updated to lead", a resent
 * whole refund answers "skipped". A partial refund is not resent after a network failure, since it may
 * have been applied.
 */
export function retryAfter(p: Required<RetryPolicy>, a: Attempt, n: number, retryNetwork: boolean): number | null {
  const e = a.error;
  if (n >= p.maxAttempts || e === null) return null;
  if (a.status === 0) {
    return retryNetwork && a.transient ? backoff(p, n) : null;
  }
  if (a.status === 429) {
    const wait = e.retryAfterSeconds !== null ? e.retryAfterSeconds * 1000 : backoff(p, n);
    return wait > p.maxRetryAfterMs ? null : wait;
  }
  if (a.status === 500 || a.status === 502 || a.status === 503 || a.status === 504) {
    if (e.message === noRetryMessage) return null;
    return Math.max(backoff(p, n), (e.retryAfterSeconds ?? 0) * 1000);
  }
  return null;
}

/** Network failures not worth another attempt: the same request would fail the same way (a certificate
 * the runtime refuses, an address it cannot parse). Everything else that ends a fetch without an answer
 * (a refused or reset connection, a name not resolved, a timeout, a connection closed before the answer
 * was read) is transient. The caller's own abort is never retried; the caller checks it first. */
export function transient(err: unknown): boolean {
  const code = errorCode(err) ?? errorCode(err instanceof Error ? (err as { cause?: unknown }).cause : undefined);
  if (code !== undefined && /CERT|TLS|SSL|ERR_INVALID_URL/i.test(code)) return false;
  if (err instanceof Error && /invalid url|failed to parse url/i.test(err.message)) return false;
  return true;
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** The default sleep: waits ms, or until signal aborts. It reports whether the wait completed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const done = (completed: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(completed);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
