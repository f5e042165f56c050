// The client: new Reftrack({apiKey, baseUrl}) and its three track calls, as the Go SDK's (sdk/client.go,
// sdk/track.go, sdk/result.go), over the global fetch.

import type { components } from "./schema.js";
import {
  ErrorCodes,
  ReftrackError,
  envelopeError,
  isObject,
  localError,
  networkError,
  parseRetryAfter,
  unexpectedResponse,
} from "./errors.js";
import { type RetryPolicy, retryAfter, sleep, transient, withDefaults } from "./retry.js";

type Schemas = components["schemas"];

/** This SDK's version, sent in the User-Agent. */
export const VERSION = "0.1.0";

/** Used when neither `baseUrl` nor the environment variable `REFTRACK_BASE_URL` says otherwise. */
export const DEFAULT_BASE_URL = "http://localhost:8080";

// Decoded success bodies, as the published OpenAPI document defines them.
/** The answer to a recorded (or provisional) lead. */
export type Lead = Schemas["LeadResponse"];
/** The answer to a recorded sale and its commission. */
export type Sale = Schemas["SaleRecorded"];
/** The 200 answer when the click was older than the program's attribution window (`attributed: false`):
 * nothing was recorded and the same invoice may be sent again with a later payment. */
export type SaleNotAttributed = Schemas["SaleWindowExpired"];
/** A sale's 200 answer: recorded, or not attributed (tell them apart with `"attributed" in data`). */
export type SaleResponse = Sale | SaleNotAttributed;
/** The answer to a refund. */
export type Refund = Schemas["RefundResponse"];
/** A key-rotation warning from an answer's body: the key still works, but rotate it. */
export type Warning = Schemas["Warning"];
/** A payment processor the sale route knows. */
export type Provider = NonNullable<Schemas["SaleRequest"]["provider"]>;

/** A sign-up. Send `customerExternalId`, `clickId` or both. */
export interface LeadInput {
  /** Your stable id for the customer (`customer_key`); send the same value with the customer's sales. */
  customerExternalId?: string | undefined;
  /** The `svc_click_id` cookie, forwarded by your front end with the sign-up. */
  clickId?: string | undefined;
  /** Improves attribution. */
  email?: string | undefined;
  /** Sent as `additional_data`, for example `{ test_mode: true, program_id: 42 }`. */
  additionalData?: Record<string, unknown> | undefined;
  /** Records a test lead (sets `additional_data.test_mode`). */
  testMode?: boolean | undefined;
}

/** A payment. Send `customerExternalId`, `clickId` or both. */
export interface SaleInput {
  customerExternalId?: string | undefined;
  clickId?: string | undefined;
  /** The amount in the currency's smallest unit (cents): a positive integer. */
  amount: number;
  /** The idempotency key (`transaction_id`), unique within the program: the processor's invoice, payment
   * or checkout-session id. Optional with `testMode`, where the SDK makes one up (`test_txn_…`) so that
   * a retried test sale keeps it. */
  invoiceId?: string | undefined;
  /** An ISO 4217 code the program lists (any case; `USD`, `EUR` and `VND` unless it lists others); empty: the program's default currency. */
  currency?: string | undefined;
  /** When the payment happened (at most 30 days ago); default now. */
  occurredAt?: Date | string | undefined;
  /** Records a test sale, never paid to a partner. */
  testMode?: boolean | undefined;
  /** The payment processor, and its payment id. */
  provider?: Provider | undefined;
  providerPaymentId?: string | undefined;
  /** The processor's live/test flag, when known. */
  livemode?: boolean | undefined;
  /** `saleType` (default `payment`), `isRecurring`, `subscriptionId`, `subscriptionInterval` and
   * `eventName` describe subscription payments. */
  saleType?: string | undefined;
  isRecurring?: boolean | undefined;
  subscriptionId?: string | undefined;
  subscriptionInterval?: string | undefined;
  eventName?: string | undefined;
}

/** Reverses a recorded sale's commission, wholly or in part. */
export interface RefundInput {
  /** The sale's `invoiceId` (`transaction_id`). */
  invoiceId: string;
  /** Refunds part of the sale (a positive integer in the smallest unit); left out, all that is left is
   * refunded. A partial refund is not resent after a network failure (it may have been applied). */
  refundAmountCents?: number | undefined;
  /** `refund` (the service's default) or `chargeback`. */
  reason?: "refund" | "chargeback" | undefined;
  /** Free text. */
  refundReason?: string | undefined;
}

/** The `Deprecation`, `Sunset` and `Link` headers of a key marked for mandatory rotation. */
export interface Rotation {
  /** When the key was marked (`Deprecation`). */
  markedAt: Date | null;
  /** The deadline after which the key stops working (`Sunset`). */
  sunset: Date | null;
  /** What explains the rotation (`Link`, rel=deprecation). */
  docsUrl: string | null;
}

interface ResultBase {
  /** The HTTP status of the last answer; 0 when none arrived (a check made before sending, or a network
   * failure). */
  status: number;
  /** The last answer's `X-Request-ID`. */
  requestId: string | null;
  /** How many requests were sent (0 when a check failed before sending). */
  attempts: number;
  /** The body's key-rotation warnings (the key still works, but rotate it). */
  warnings: Warning[];
  /** The rotation headers of a key marked for rotation. */
  rotation: Rotation | null;
}

/** A 2xx answer. */
export interface Success<T> extends ResultBase {
  ok: true;
  /** The decoded body. */
  data: T;
  error: null;
  alreadyRecorded: false;
}

/** Anything else: an error answer, a check made before sending, or a network failure. */
export interface Failure extends ResultBase {
  ok: false;
  data: null;
  error: ReftrackError;
  /** A 409 `duplicate_transaction`: the sale was recorded before (possibly by an earlier attempt of this
   * very call), so count it as recorded and do not resend. */
  alreadyRecorded: boolean;
}

/** The outcome of one track call, after any retries. The calls never throw for an API or network error. */
export type Result<T> = Success<T> | Failure;

/** The part of a fetch response the SDK reads. */
export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** A fetch function: the global one by default. */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<FetchResponse>;

/** Where retries (debug) and key-rotation notices (warn, once each per client) go. */
export interface Logger {
  warn?(message: string, details?: Record<string, unknown>): void;
  debug?(message: string, details?: Record<string, unknown>): void;
}

/** Options of {@link Reftrack}. */
export interface ReftrackOptions {
  /** The program's API key. */
  apiKey: string;
  /** The service's address; default the environment variable `REFTRACK_BASE_URL` where there is one,
   * else `http://localhost:8080`. */
  baseUrl?: string | undefined;
  /** The retry policy (default {@link defaultRetryPolicy}); `false` sends every request once. */
  retry?: RetryPolicy | false | undefined;
  /** How long one attempt may wait for its answer, in milliseconds; default 30000. A timeout counts as a
   * network failure. */
  timeoutMs?: number | undefined;
  /** Put in front of the SDK's own User-Agent (`reftrack-js/<version>`), for example `acme-billing/2.3`. */
  userAgent?: string | undefined;
  /** Default: warnings to `console.warn`, no debug; `null` logs nothing. */
  logger?: Logger | null | undefined;
  /** The fetch to send with; default the global `fetch`. */
  fetch?: Fetch | undefined;
  /** How the client waits between attempts (default a timer that an aborted `signal` ends early); tests
   * replace it to record the waits without spending them. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<unknown>) | undefined;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the call: a request in flight ends as a network failure, and no further attempt is made (a
   * wait between attempts ends at once, returning the last answer). */
  signal?: AbortSignal | undefined;
}

interface Env {
  process?: { env?: Record<string, string | undefined>; versions?: { node?: string } };
  navigator?: { userAgent?: string };
}

/**
 * Reports leads, sales and refunds to reftrack with one program API key.
 *
 * ```ts
 * const reftrack = new Reftrack({ apiKey: process.env.REFTRACK_API_KEY! });
 * const res = await reftrack.trackSale({ customerExternalId: "user_42", amount: 4900, invoiceId: "in_1001" });
 * if (!res.ok && !res.alreadyRecorded) console.error(String(res.error));
 * ```
 *
 * The track calls resolve a {@link Result} and never throw for an API error or a network failure. They
 * retry what is safe to retry (429 after Retry-After, 5xx other than "Failed to create commission",
 * network failures) within the retry policy. A client may be shared by concurrent calls.
 */
export class Reftrack {
  /** The address requests go to. */
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly userAgent: string;
  private readonly retry: Required<RetryPolicy>;
  private readonly timeoutMs: number;
  private readonly logger: Logger | null;
  private readonly fetchFn: Fetch;
  private readonly sleepFn: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  // The rotation notices already logged, so that each is logged once per client.
  private readonly warned = new Set<string>();

  constructor(options: ReftrackOptions) {
    const env = globalThis as Env;
    this.apiKey = options.apiKey ?? "";
    this.baseUrl = (options.baseUrl || env.process?.env?.["REFTRACK_BASE_URL"] || DEFAULT_BASE_URL).replace(/\/+$/, "");
    const node = env.process?.versions?.node;
    const runtime = node ? `node/${node}` : env.navigator?.userAgent;
    let ua = `reftrack-js/${VERSION}` + (runtime ? ` (${runtime})` : "");
    if (options.userAgent) ua = `${options.userAgent} ${ua}`;
    this.userAgent = ua;
    this.retry = withDefaults(options.retry);
    this.timeoutMs = options.timeoutMs !== undefined && options.timeoutMs > 0 ? options.timeoutMs : 30_000;
    this.logger = options.logger === undefined ? { warn: (m, d) => console.warn(m, d ?? "") } : options.logger;
    // Read when called, not here: a runtime (or a test) may install its fetch after the client is made.
    this.fetchFn = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.sleepFn = options.sleep ?? sleep;
  }

  /** Reports a sign-up. */
  async trackLead(input: LeadInput, options: CallOptions = {}): Promise<Result<Lead>> {
    if (!input.customerExternalId && !input.clickId) return failed(localError("click_id or customer_key is required"));
    const body: Schemas["LeadRequest"] = {};
    if (input.customerExternalId) body.customer_key = input.customerExternalId;
    if (input.clickId) body.click_id = input.clickId;
    if (input.email) body.email = input.email;
    const extra = input.additionalData ?? {};
    if (Object.keys(extra).length > 0 || input.testMode) {
      body.additional_data = { ...extra, ...(input.testMode ? { test_mode: true } : {}) };
    }
    return this.send<Lead>("lead", "/api/v1/track/lead", body, true, options);
  }

  /** Reports a payment. `alreadyRecorded` (a 409) means a sale with this invoice was recorded before:
   * count it as recorded and do not resend. */
  async trackSale(input: SaleInput, options: CallOptions = {}): Promise<Result<SaleResponse>> {
    if (!Number.isSafeInteger(input.amount) || input.amount <= 0) {
      return failed(localError("amount_cents is required and must be a positive integer"));
    }
    if (!input.customerExternalId && !input.clickId) {
      return failed(localError("Customer not found. Provide customer_key or click_id."));
    }
    const invoice = typeof input.invoiceId === "string" ? input.invoiceId : "";
    if (invoice.trim() === "" && !input.testMode) return failed(localError("transaction_id is required and must be a string"));
    let occurredAt: string | undefined;
    if (input.occurredAt !== undefined) {
      const d = input.occurredAt instanceof Date ? input.occurredAt : null;
      if (d !== null && Number.isNaN(d.getTime())) return failed(localError("occurred_at must be an ISO 8601 time within the last 30 days"));
      occurredAt = d !== null ? d.toISOString() : String(input.occurredAt);
    }
    const body: Schemas["SaleRequest"] = {
      // Made here rather than by the service so that a retried test sale keeps its id.
      transaction_id: invoice !== "" ? invoice : testTransactionId(),
      amount_cents: input.amount,
    };
    if (input.customerExternalId) body.customer_key = input.customerExternalId;
    if (input.clickId) body.click_id = input.clickId;
    if (input.currency) body.currency = input.currency.toUpperCase();
    if (occurredAt !== undefined) body.occurred_at = occurredAt;
    if (input.provider) body.provider = input.provider;
    if (input.providerPaymentId) body.provider_payment_id = input.providerPaymentId;
    if (input.livemode !== undefined) body.livemode = input.livemode;
    if (input.saleType) body.sale_type = input.saleType;
    if (input.isRecurring) body.is_recurring = true;
    if (input.subscriptionId) body.subscription_id = input.subscriptionId;
    if (input.subscriptionInterval) body.subscription_interval = input.subscriptionInterval;
    if (input.eventName) body.event_name = input.eventName;
    if (input.testMode) body.additional_data = { test_mode: true };
    return this.send<SaleResponse>("sale", "/api/v1/track/sale", body, true, options);
  }

  /** Reverses a sale's commission, wholly or in part. */
  async trackRefund(input: RefundInput, options: CallOptions = {}): Promise<Result<Refund>> {
    const invoice = typeof input.invoiceId === "string" ? input.invoiceId : "";
    if (invoice.trim() === "") return failed(localError("transaction_id is required"));
    if (input.reason !== undefined && input.reason !== "refund" && input.reason !== "chargeback") {
      return failed(localError("reason must be refund or chargeback"));
    }
    const amount = input.refundAmountCents;
    if (amount !== undefined && (!Number.isSafeInteger(amount) || amount <= 0)) {
      return failed(localError("refund_amount_cents must be a positive integer"));
    }
    const body: Schemas["RefundRequest"] = { transaction_id: invoice };
    if (input.reason) body.reason = input.reason;
    if (input.refundReason) body.refund_reason = input.refundReason;
    if (amount !== undefined) body.refund_amount_cents = amount;
    // A partial refund whose answer was lost may have been applied: it is not resent after a network
    // failure. A whole refund resent answers "skipped".
    return this.send<Refund>("refund", "/api/v1/track/refund", body, amount === undefined, options);
  }

  /** Sends a request until it succeeds or the retry policy says stop, and returns the last outcome. */
  private async send<T>(op: string, path: string, body: object, retryNetwork: boolean, options: CallOptions): Promise<Result<T>> {
    let json: string;
    try {
      json = JSON.stringify(body);
    } catch (err) {
      return failed(localError(err instanceof Error ? err.message : String(err)));
    }
    const signal = options.signal;
    for (let attempt = 1; ; attempt++) {
      const { result, transient } = await this.attempt<T>(path, json, signal);
      result.attempts = attempt;
      this.noteRotation(result);
      if (signal?.aborted) return result;
      const wait = retryAfter(this.retry, { status: result.status, error: result.error, transient }, attempt, retryNetwork);
      if (wait === null) return result;
      this.logger?.debug?.("reftrack: retrying", { op, attempt, waitMs: Math.round(wait), error: String(result.error) });
      await this.sleepFn(wait, signal);
      if (signal?.aborted) return result;
    }
  }

  /** One request: its decoded answer, or a network failure and whether it is worth another attempt. */
  private async attempt<T>(path: string, body: string, signal: AbortSignal | undefined): Promise<{ result: Result<T>; transient: boolean }> {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(signal?.reason);
    if (signal?.aborted) ctl.abort(signal.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort(new Error(`no answer within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    try {
      const res = await this.fetchFn(this.baseUrl + path, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          Authorization: `Bearer ${this.apiKey}`,
          "User-Agent": this.userAgent,
        },
        body,
        signal: ctl.signal,
      });
      const text = await res.text();
      return { result: decodeAnswer<T>(res.status, res.headers, text), transient: false };
    } catch (err) {
      if (timedOut) {
        return { result: failed(networkError(new Error(`no answer within ${this.timeoutMs} ms`, { cause: err }))), transient: true };
      }
      // The caller's own abort is never retried.
      return { result: failed(networkError(err)), transient: !signal?.aborted && transient(err) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Logs, once per client, that the key is marked for rotation or retired. */
  private noteRotation(r: Result<unknown>): void {
    for (const w of r.warnings) {
      this.warnOnce(`${w.code}|${w.rotate_by}`, `reftrack: ${w.message}`, { code: w.code, rotateBy: w.rotate_by, hint: w.hint, docsUrl: w.docs_url });
    }
    if (r.rotation !== null && r.warnings.length === 0) {
      this.warnOnce(`sunset|${r.rotation.sunset?.toISOString()}`, "reftrack: the API key is marked for rotation", {
        sunset: r.rotation.sunset,
        docsUrl: r.rotation.docsUrl,
      });
    }
    if (r.error !== null && r.error.code === "api_key_rotation_required") {
      this.warnOnce("retired", `reftrack: ${r.error.message}`, { hint: r.error.hint, docsUrl: r.error.docsUrl });
    }
  }

  private warnOnce(key: string, message: string, details: Record<string, unknown>): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.logger?.warn?.(message, details);
  }
}

/** Reads one HTTP answer into a Result: the status, X-Request-ID, the rotation headers and warnings, and
 * on an error either envelope (or, when the answer is not the service's, an unexpected_response). */
export function decodeAnswer<T>(status: number, headers: { get(name: string): string | null }, text: string): Result<T> {
  const requestId = headers.get("x-request-id") || null;
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const base = {
    status,
    requestId,
    attempts: 1,
    warnings: isObject(body) && Array.isArray(body["warnings"]) ? (body["warnings"] as Warning[]) : [],
    rotation: rotationHeaders(headers),
  };
  const retryAfterHeader = parseRetryAfter(headers.get("retry-after"), Date.now());
  if (status >= 200 && status < 300) {
    if (isObject(body)) return { ...base, ok: true, data: body as T, error: null, alreadyRecorded: false };
    // A 2xx without the JSON object every success carries did not come from the service.
    return { ...base, ok: false, data: null, error: unexpectedResponse(status, text, requestId, retryAfterHeader), alreadyRecorded: false };
  }
  const error = envelopeError(status, body, requestId, retryAfterHeader) ?? unexpectedResponse(status, text, requestId, retryAfterHeader);
  return { ...base, ok: false, data: null, error, alreadyRecorded: status === 409 && error.code === ErrorCodes.duplicateTransaction };
}

/** The RFC 9745 Deprecation and RFC 8594 Sunset headers of a marked key. */
function rotationHeaders(h: { get(name: string): string | null }): Rotation | null {
  const dep = h.get("deprecation"), sunset = h.get("sunset");
  if (!dep && !sunset) return null;
  const rot: Rotation = { markedAt: null, sunset: null, docsUrl: null };
  const secs = dep ? Number(dep.replace(/^@/, "")) : NaN;
  if (dep && /^@?\d+$/.test(dep.trim())) rot.markedAt = new Date(secs * 1000);
  const at = sunset ? Date.parse(sunset) : NaN;
  if (!Number.isNaN(at)) rot.sunset = new Date(at);
  for (const link of (h.get("link") ?? "").split(",")) {
    const [target, ...params] = link.split(";");
    if (params.some((p) => /^\s*rel="?deprecation"?\s*$/.test(p))) rot.docsUrl = (target ?? "").trim().replace(/^<|>$/g, "");
  }
  return rot;
}

function failed(error: ReftrackError): Failure {
  return { ok: false, status: error.status, data: null, error, requestId: error.requestId, attempts: 0, warnings: [], rotation: null, alreadyRecorded: false };
}

// test_txn_ and nineteen digits, as the Go SDK's Unix nanoseconds: the milliseconds and six random digits.
function testTransactionId(): string {
  return `test_txn_${Date.now()}${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
}
