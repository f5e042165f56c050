// Errors of the track calls: both of the service's envelopes, checks made before sending, network
// failures and answers that are not the service's, in one shape (the Go SDK's APIError).

/** Codes the SDK sets itself, and the service's codes it acts on. Every other `code` is the service's own
 * `error.code` (the spec's `ErrorCode` schema lists them; the list may grow, so treat a code you do not
 * know by `status`). */
export const ErrorCodes = {
  /** The service's code for a malformed request (400). The checks made before sending use it too, with
   * `status` 0, `attempts` 0 and the message the service would answer. */
  invalidRequest: "invalid_request",
  /** No HTTP answer arrived (`status` 0); `cause` holds what failed. */
  network: "network_error",
  /** An answer arrived that is not one of the service's envelopes, for example a proxy's or load
   * balancer's error page; `status` is its status and `message` quotes it. */
  unexpectedResponse: "unexpected_response",
  /** The 409 of a sale whose invoice was already recorded: treat it as recorded. */
  duplicateTransaction: "duplicate_transaction",
  /** A 429: nothing was recorded; retried after `Retry-After`. */
  rateLimited: "rate_limited",
} as const;

/** Fields of a {@link ReftrackError}, as its constructor takes them. */
export interface ReftrackErrorInit {
  status: number;
  code: string;
  message: string;
  name?: string | undefined;
  details?: Record<string, unknown> | undefined;
  requestId?: string | null | undefined;
  hint?: string | undefined;
  docsUrl?: string | undefined;
  retryAfterSeconds?: number | null | undefined;
  cause?: unknown;
}

/**
 * Why a call did not succeed: an error answer of the service in either of its envelopes (platform:
 * `{data: null, error: {status, name, code, message, details}}`; typed: `{error: {code, message, …}}`), a
 * check the SDK made before sending, or a network failure. It is returned in a result, never thrown by
 * the SDK; throw it yourself if you like (`if (!res.ok) throw res.error`).
 */
export class ReftrackError extends Error {
  /** The HTTP status; 0 when no answer arrived (a check made before sending, or a network failure). */
  readonly status: number;
  /** Never empty: the service's `error.code`, or `invalid_request`, `network_error`,
   * `unexpected_response` set by the SDK (see {@link ErrorCodes}). */
  readonly code: string;
  /** The platform envelope's `error.details` (for example `sale_id` on a 409); `{}` otherwise. */
  readonly details: Record<string, unknown>;
  /** The answer's `X-Request-ID`, or null. */
  readonly requestId: string | null;
  /** With typed errors such as `api_key_rotation_required`: what to do, and where it is documented. */
  readonly hint: string | undefined;
  readonly docsUrl: string | undefined;
  /** The wait the service asked for, in seconds (`Retry-After`, or `retry_after_seconds`), or null. */
  readonly retryAfterSeconds: number | null;

  constructor(init: ReftrackErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    // The platform envelope's error class (for example "BadRequestError"); ReftrackError otherwise.
    this.name = init.name || "ReftrackError";
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.requestId = init.requestId ?? null;
    this.hint = init.hint;
    this.docsUrl = init.docsUrl;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }

  /** The recorded sale's id on a 409 `duplicate_transaction`, when the sale is in the key's program. */
  get saleId(): number | undefined {
    const id = this.details["sale_id"];
    return typeof id === "number" ? id : undefined;
  }

  /** `reftrack: <status> <code>: <message> (request_id <id>)`, as the Go SDK words it. */
  override toString(): string {
    let s = "reftrack: ";
    if (this.status !== 0) s += `${this.status} `;
    if (this.code) s += `${this.code}: `;
    s += this.message;
    if (this.requestId) s += ` (request_id ${this.requestId})`;
    return s;
  }
}

/** A check made before sending, with the service's own message for the same mistake. */
export function localError(message: string): ReftrackError {
  return new ReftrackError({ status: 0, code: ErrorCodes.invalidRequest, message });
}

/** A failure with no HTTP answer; the message says what failed (for example
 * `fetch failed: connect ECONNREFUSED 127.0.0.1:8080`). */
export function networkError(err: unknown): ReftrackError {
  return new ReftrackError({ status: 0, code: ErrorCodes.network, message: describe(err), cause: err });
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let msg = err.message || err.name;
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message && !msg.includes(cause.message)) msg += `: ${cause.message}`;
  return msg;
}

// The reason phrases of the statuses a proxy in front of the service is likely to answer with.
const statusText: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Request Entity Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The error of an answer that is not one of the service's envelopes. */
export function unexpectedResponse(status: number, body: string, requestId: string | null, retryAfterSeconds: number | null): ReftrackError {
  let message = statusText[status] ?? `HTTP ${status}`;
  const text = body.trim();
  if (text !== "" && text.length <= 200) message += `: ${text}`;
  return new ReftrackError({ status, code: ErrorCodes.unexpectedResponse, message, requestId, retryAfterSeconds });
}

/** Reads either envelope's `error` member; null when it is not one (both carry code and message on every
 * error). */
export function envelopeError(
  status: number,
  body: unknown,
  requestId: string | null,
  retryAfterHeader: number | null,
): ReftrackError | null {
  if (!isObject(body) || !isObject(body["error"])) return null;
  const e = body["error"];
  const code = e["code"], message = e["message"];
  if (typeof code !== "string" || code === "" || typeof message !== "string" || message === "") return null;
  const seconds = e["retry_after_seconds"];
  return new ReftrackError({
    status,
    code,
    message,
    name: typeof e["name"] === "string" ? e["name"] : undefined,
    details: isObject(e["details"]) ? e["details"] : {},
    requestId,
    hint: typeof e["hint"] === "string" ? e["hint"] : undefined,
    docsUrl: typeof e["docs_url"] === "string" ? e["docs_url"] : undefined,
    // The header wins, as in the Go SDK.
    retryAfterSeconds: retryAfterHeader ?? (typeof seconds === "number" ? seconds : null),
  });
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Retry-After as seconds or as an HTTP date (seconds from now, never negative); null when absent or
 * unreadable. */
export function parseRetryAfter(v: string | null, now: number): number | null {
  if (v === null || v.trim() === "") return null;
  const s = v.trim();
  if (/^\d+$/.test(s)) return Number(s);
  const at = Date.parse(s);
  if (Number.isNaN(at)) return null;
  return Math.max((at - now) / 1000, 0);
}
