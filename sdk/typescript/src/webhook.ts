// Verifying reftrack's webhooks, which follow the Standard Webhooks specification, as the Go SDK's
// sdk.VerifyWebhook (sdk/webhook.go).

import { hmacSha256 } from "./hmac.js";

/** Why a delivery was refused. Only `secret` is the receiver's own mistake (its configuration: answer
 * 5xx); the others describe the request. */
export type WebhookErrorReason =
  /** The secret is empty or not base64 (after its optional `whsec_` prefix). */
  | "secret"
  /** webhook-id, webhook-timestamp or webhook-signature is missing, or the timestamp is not Unix seconds. */
  | "headers"
  /** No v1 signature of webhook-signature matches the secret, id, timestamp and body. */
  | "signature"
  /** The signature matches but webhook-timestamp is more than 5 minutes away from this clock: a replay,
   * or a clock that is off. */
  | "timestamp"
  /** The delivery is authentic but its body is not an event (type, timestamp, data). */
  | "body";

/** The error {@link verifyWebhook} rejects with. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookErrorReason;
  constructor(reason: WebhookErrorReason, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** A verified delivery. */
export interface WebhookEvent {
  /** The delivery's webhook-id (`msg_…`). Delivery is at least once: an event whose answer was lost or
   * was not a 2xx is sent again with the same id, so deduplicate on it. */
  id: string;
  /** The event's type, for example `sale.created` (the spec's `WebhookEventType`). */
  type: string;
  /** When the event happened (the body's `timestamp`). */
  timestamp: Date;
  /** The resource the event is about, as the API shows it. */
  data: unknown;
  /** When this delivery attempt was signed (webhook-timestamp); each retry has its own. */
  attempted: Date;
}

/** A request's headers: a fetch `Headers` (or anything with `get`), or a plain object such as Node's
 * `req.headers` (names in any case; a value may be an array of header lines). */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | readonly string[] | null | undefined>;

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** The receiver's clock (default now), which webhook-timestamp must be within 5 minutes of. */
  now?: Date | number | undefined;
}

/** How far webhook-timestamp may be from the receiver's clock, either way: it bounds replays of a
 * captured delivery, and allows for clocks a little off. */
const toleranceMs = 5 * 60 * 1000;

/**
 * Checks a delivery of reftrack's webhooks and resolves its event, or rejects with a
 * {@link WebhookVerificationError}. `secret` is the endpoint's signing secret, with or without its
 * `whsec_` prefix; `headers` the request's; `body` the request body as received, unchanged (verify before
 * any parsing or re-encoding: a re-encoded body no longer matches its signature).
 *
 * The delivery is accepted when one of the space-separated `v1,` signatures of webhook-signature is the
 * base64 HMAC-SHA256, keyed with the secret's decoded bytes, of `${webhook-id}.${webhook-timestamp}.${body}`
 * (entries of other versions are ignored; several are sent while a secret is rotated), compared in
 * constant time, and webhook-timestamp is within 5 minutes of now. The signature is checked before the
 * timestamp, so that a `timestamp` refusal only ever describes an authentic delivery.
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  // Line breaks are ignored, as Go's base64 decoder ignores them.
  const key = base64Decode(String(secret ?? "").replace(/^whsec_/, "").replace(/[\r\n]/g, ""));
  if (key === null) throw new WebhookVerificationError("secret", "reftrack: webhook secret is not valid base64");
  if (key.length === 0) throw new WebhookVerificationError("secret", "reftrack: webhook secret is not valid base64: empty");

  const id = header(headers, "webhook-id")[0] ?? "";
  const ts = header(headers, "webhook-timestamp")[0] ?? "";
  // Space-separated, possibly over several header lines; a fetch Headers or Node joins repeated lines
  // with ", ", hence the trailing commas removed (a signature never ends with one).
  const signatures = header(headers, "webhook-signature")
    .join(" ")
    .split(/\s+/)
    .map((s) => s.replace(/,+$/, ""))
    .filter((s) => s !== "");
  const malformed = (what: string) => new WebhookVerificationError("headers", `reftrack: webhook header missing or malformed: ${what}`);
  if (id === "") throw malformed("no webhook-id");
  if (ts === "") throw malformed("no webhook-timestamp");
  if (signatures.length === 0) throw malformed("no webhook-signature");
  // Digits only: the signed content holds the header as sent, so "+1614265330" must not pass as the same
  // time.
  if (!/^\d+$/.test(ts) || !Number.isSafeInteger(Number(ts))) {
    const shown = ts.length > 24 ? `${ts.slice(0, 24)}…` : ts;
    throw malformed(`webhook-timestamp "${shown}" is not Unix seconds`);
  }

  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body);
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  const want = await hmacSha256(key, signed);
  if (!anySignatureMatches(signatures, want)) {
    throw new WebhookVerificationError("signature", "reftrack: no webhook signature matches");
  }

  const attempted = Number(ts) * 1000;
  const now = options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime();
  const d = now - attempted;
  if (d > toleranceMs) {
    throw new WebhookVerificationError("timestamp", `reftrack: webhook timestamp outside the 5-minute tolerance: signed ${Math.round(d / 1000)}s ago`);
  }
  if (d < -toleranceMs) {
    throw new WebhookVerificationError("timestamp", `reftrack: webhook timestamp outside the 5-minute tolerance: signed ${Math.round(-d / 1000)}s ahead of this clock`);
  }

  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new WebhookVerificationError("body", `reftrack: webhook body is not an event: ${err instanceof Error ? err.message : String(err)}`);
  }
  const e = typeof event === "object" && event !== null && !Array.isArray(event) ? (event as Record<string, unknown>) : {};
  const type = e["type"], timestamp = e["timestamp"];
  if (typeof type !== "string" || type === "" || !isRFC3339(timestamp) || e["data"] === undefined) {
    throw new WebhookVerificationError("body", "reftrack: webhook body is not an event: type, timestamp or data missing");
  }
  return { id, type, timestamp: new Date(timestamp), data: e["data"], attempted: new Date(attempted) };
}

/** The values of a header, in any of the shapes {@link WebhookHeaders} allows. */
function header(headers: WebhookHeaders, name: string): string[] {
  if (typeof (headers as { get?: unknown }).get === "function") {
    const v = (headers as { get(name: string): string | null }).get(name);
    return v === null || v === undefined ? [] : [v];
  }
  const record = headers as Record<string, string | readonly string[] | null | undefined>;
  const values: string[] = [];
  for (const k of Object.keys(record)) {
    if (k.toLowerCase() !== name) continue;
    const v = record[k];
    if (typeof v === "string") values.push(v);
    else if (Array.isArray(v)) values.push(...v.filter((x): x is string => typeof x === "string"));
  }
  return values;
}

/** Whether one of the v1 entries ("v1,<base64>") is the HMAC want. Entries of other versions, and entries
 * that are not version,base64, cannot match and are skipped. */
function anySignatureMatches(entries: string[], want: Uint8Array): boolean {
  let matched = false;
  for (const entry of entries) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const got = base64Decode(entry.slice(comma + 1));
    if (got !== null && constantTimeEqual(got, want)) matched = true;
  }
  return matched;
}

/** Compares two byte strings in time that depends on their length only. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 with its padding; null for anything else. */
function base64Decode(s: string): Uint8Array | null {
  if (!base64.test(s)) return null;
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// RFC 3339, as Go's time.Time reads the body's timestamp.
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function isRFC3339(v: unknown): v is string {
  return typeof v === "string" && rfc3339.test(v) && !Number.isNaN(Date.parse(v));
}
