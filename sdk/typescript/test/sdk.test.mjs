// Tests of @reftrack/sdk against a real reftrack server, with node's own test runner.
//
// pkg/e2e/sdk_typescript_test.go (`go test -run TestTypeScriptSDK ./pkg/e2e`) builds and packs the
// package, installs the tarball into a project of its own, copies this file there and runs it with one
// node process: `@reftrack/sdk` below is the installed package. Environment, from that test:
// REFTRACK_BASE_URL (a proxy that checks every answer against the spec), REFTRACK_API_KEY,
// REFTRACK_ACCOUNT_TOKEN, REFTRACK_PROGRAM_ID and REFTRACK_AFFILIATE_URL of the main program;
// REFTRACK_OTHER_PROGRAM_ID; REFTRACK_LIMITED_KEY and _AFFILIATE_URL (its first two sales or refunds
// answer 429); REFTRACK_RETIRED_KEY (past its rotation deadline); REFTRACK_ROTATING_KEY, _AFFILIATE_URL and
// _DEADLINE (marked for rotation); REFTRACK_CONTROL_URL (POST /deliver runs the webhook worker);
// REFTRACK_README (the package's README, whose quick start runs here); REFTRACK_SUMMARY_FILE (what the Go
// test checks in the database). The invoice ts_fail_once fails once in the database, ts_commission_fails
// at its commission.
//
// The tests of the first group run concurrently; the second group's one at a time (they change the
// process's globals, or need the server's sale writer to themselves).

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { after, describe, test } from "node:test";

import { ErrorCodes, Reftrack, ReftrackError, VERSION, WebhookVerificationError, defaultRetryPolicy, noRetry, verifyWebhook } from "@reftrack/sdk";

const env = (name) => {
  const v = process.env[name];
  assert.ok(v, `${name} is not set`);
  return v;
};
const baseUrl = env("REFTRACK_BASE_URL");
const apiKey = env("REFTRACK_API_KEY");
const run = `${Date.now().toString(36)}`;
const summary = {};
after(() => writeFileSync(env("REFTRACK_SUMMARY_FILE"), JSON.stringify(summary)));

/** A client of the main program; no warnings printed unless a test asks. */
const client = (options = {}) => new Reftrack({ apiKey, baseUrl, logger: null, ...options });

/** Records a click on a referral link as the browser tracker does, and returns its id. */
async function click(affiliateUrl = env("REFTRACK_AFFILIATE_URL")) {
  const res = await fetch(`${baseUrl}/api/v1/track/click`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0" },
    body: JSON.stringify({ affiliate_url: affiliateUrl }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.click_id;
}

/** A customer who clicked and signed up (a server-mode lead), ready to buy. */
async function customer(key, { apiKey: k = apiKey, affiliateUrl } = {}) {
  const clickId = await click(affiliateUrl);
  const res = await new Reftrack({ apiKey: k, baseUrl, logger: null }).trackLead({ customerExternalId: key, clickId });
  assert.equal(res.status, 200, String(res.error));
  return clickId;
}

/** A logger that keeps what it is told. */
function memoryLogger() {
  const lines = [];
  return { lines, warn: (m, d) => lines.push({ level: "warn", m, d }), debug: (m, d) => lines.push({ level: "debug", m, d }) };
}

/** A sleep that spends no time and records the waits asked for. */
function recordingSleep() {
  const waits = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

/** Asserts a failure's shape: what every error result has, whatever its cause. */
function assertFailure(res, { status, code, name, message, attempts = 1 }) {
  assert.equal(res.ok, false);
  assert.equal(res.data, null);
  assert.ok(res.error instanceof ReftrackError);
  assert.ok(res.error instanceof Error);
  assert.equal(res.status, status);
  assert.equal(res.error.status, status);
  assert.equal(res.error.code, code);
  if (name !== undefined) assert.equal(res.error.name, name);
  if (message instanceof RegExp) assert.match(res.error.message, message);
  else if (message !== undefined) assert.equal(res.error.message, message);
  assert.equal(res.attempts, attempts);
  if (status !== 0 && code !== ErrorCodes.unexpectedResponse) {
    assert.ok(res.requestId, "an answer of the service carries X-Request-ID");
  }
  assert.equal(res.error.requestId, res.requestId);
  assert.ok(String(res.error).startsWith(status === 0 ? `reftrack: ${code}: ` : `reftrack: ${status} ${code}: `), String(res.error));
}

/**
 * A proxy in front of the server that does, to each request in turn, what its plan says (then passes the
 * rest): `reset` closes the connection before the server sees the request; `drop` lets the server answer,
 * then closes the connection instead of passing the answer on; `hang` never answers; `503` answers a load
 * balancer's HTML page; `429` the service's own 429 with Retry-After: 1.
 */
async function faultProxy(plan = []) {
  const seen = [];
  let reached = 0;
  const server = http.createServer(async (req, res) => {
    const fault = plan.shift() ?? "pass";
    const request = { headers: req.headers, body: "" };
    seen.push(request);
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString();
    request.body = body;
    switch (fault) {
      case "reset":
        return req.socket.destroy();
      case "hang":
        return;
      case "503":
        return res.writeHead(503, { "Content-Type": "text/html" }).end("<html><body>upstream unavailable</body></html>");
      case "429":
        return res
          .writeHead(429, { "Content-Type": "application/json", "Retry-After": "1", "X-Request-ID": "req-limited" })
          .end(JSON.stringify({ error: { status: 429, code: "rate_limited", message: "Too many requests", retry_after_seconds: 1 } }));
    }
    reached++;
    const headers = {};
    for (const h of ["content-type", "authorization", "user-agent", "accept"]) if (req.headers[h]) headers[h] = req.headers[h];
    const up = await fetch(baseUrl + req.url, { method: req.method, headers, body });
    const text = await up.text();
    if (fault === "drop") return req.socket.destroy();
    const out = {};
    up.headers.forEach((v, k) => {
      if (!["content-length", "transfer-encoding", "connection", "keep-alive"].includes(k)) out[k] = v;
    });
    res.writeHead(up.status, out).end(text);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    reached: () => reached,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("against the server, concurrently", { concurrency: true }, () => {
  test("lead, sale, partial and whole refunds", async () => {
    const rt = client();
    const clickId = await click();
    const cust = `ts_buyer_${run}`;
    const invoice = `ts_in_${run}`;

    const lead = await rt.trackLead({ customerExternalId: cust, clickId, email: "ada@example.com" });
    assert.equal(lead.ok, true, String(lead.error));
    assert.equal(lead.status, 200);
    assert.equal(lead.error, null);
    assert.equal(lead.attempts, 1);
    assert.equal(lead.alreadyRecorded, false);
    assert.ok(lead.requestId);
    assert.deepEqual(lead.warnings, []);
    assert.equal(lead.rotation, null);
    assert.equal(lead.data.message, "Lead tracked successfully");
    assert.equal(lead.data.attribution.click_id, clickId);
    assert.equal(lead.data.customer_key, cust);

    const sale = await rt.trackSale({ customerExternalId: cust, amount: 4900, currency: "eur", invoiceId: invoice });
    assert.equal(sale.ok, true, String(sale.error));
    assert.ok(!("attributed" in sale.data), "recorded, not SaleNotAttributed");
    assert.equal(sale.data.message, "Sale tracked successfully");
    assert.equal(sale.data.transaction_id, invoice);
    assert.equal(sale.data.amount_cents, 4900);
    assert.equal(sale.data.currency, "EUR");
    assert.equal(sale.data.is_test, false);
    assert.equal(sale.data.commission.amount_cents, 980);

    const part = await rt.trackRefund({ invoiceId: invoice, refundAmountCents: 1225, reason: "chargeback", refundReason: "disputed" });
    assert.equal(part.ok, true, String(part.error));
    assert.equal(part.data.status, "refunded");
    assert.equal(part.data.reason, "chargeback");
    assert.equal(part.data.refunded_amount_cents, 1225);
    const rest = await rt.trackRefund({ invoiceId: invoice });
    assert.equal(rest.ok, true, String(rest.error));
    assert.equal(rest.data.status, "reversed");
    assert.equal(rest.data.refunded_amount_cents, 4900);
    assert.equal(rest.data.commission.status, "reversed");
    assert.equal(rest.data.sale_id, sale.data.sale_id);
    const again = await rt.trackRefund({ invoiceId: invoice });
    assert.equal(again.ok, true, String(again.error));
    assert.equal(again.data.status, "skipped");

    Object.assign(summary, { Customer: cust, Invoice: invoice, LeadID: lead.data.lead_id, SaleID: sale.data.sale_id });
  });

  test("test mode: a test lead, and a test sale whose invoice the SDK makes up", async () => {
    const rt = client();
    const clickId = await click();
    const cust = `ts_tester_${run}`;
    const lead = await rt.trackLead({ customerExternalId: cust, clickId, testMode: true });
    assert.equal(lead.ok, true, String(lead.error));
    assert.equal(lead.data.data?.test_mode, true);
    const sale = await rt.trackSale({ customerExternalId: cust, amount: 1000, testMode: true });
    assert.equal(sale.ok, true, String(sale.error));
    assert.equal(sale.data.is_test, true);
    assert.match(sale.data.transaction_id, /^test_txn_\d{19}$/);
  });

  test("the wire: every input field reaches its body member, with the SDK's headers", async () => {
    const proxy = await faultProxy();
    after(proxy.close);
    const rt = new Reftrack({ apiKey, baseUrl: `${proxy.url}/`, userAgent: "acme-billing/2.3", logger: null });
    assert.equal(rt.baseUrl, proxy.url);
    const clickId = await click();
    const cust = `ts_wire_${run}`;
    const lead = await rt.trackLead({ customerExternalId: cust, clickId, email: "wire@example.com", additionalData: { source: "ads" } });
    assert.equal(lead.ok, true, String(lead.error));
    const occurredAt = new Date(Date.now() - 3600_000);
    const invoice = `ts_wire_in_${run}`;
    const sale = await rt.trackSale({
      customerExternalId: cust,
      clickId,
      amount: 2500,
      invoiceId: invoice,
      currency: "usd",
      occurredAt,
      provider: "stripe",
      providerPaymentId: "pi_1",
      livemode: false,
      saleType: "subscription",
      isRecurring: true,
      subscriptionId: "sub_1",
      subscriptionInterval: "month",
      eventName: "renewal",
    });
    assert.equal(sale.ok, true, String(sale.error));
    const refund = await rt.trackRefund({ invoiceId: invoice, refundAmountCents: 100, reason: "refund", refundReason: "asked" });
    assert.equal(refund.ok, true, String(refund.error));

    assert.deepEqual(
      proxy.seen.map((r) => JSON.parse(r.body)),
      [
        { customer_key: cust, click_id: clickId, email: "wire@example.com", additional_data: { source: "ads" } },
        {
          transaction_id: invoice,
          amount_cents: 2500,
          customer_key: cust,
          click_id: clickId,
          currency: "USD",
          occurred_at: occurredAt.toISOString(),
          provider: "stripe",
          provider_payment_id: "pi_1",
          livemode: false,
          sale_type: "subscription",
          is_recurring: true,
          subscription_id: "sub_1",
          subscription_interval: "month",
          event_name: "renewal",
        },
        { transaction_id: invoice, reason: "refund", refund_reason: "asked", refund_amount_cents: 100 },
      ],
    );
    for (const r of proxy.seen) {
      assert.equal(r.headers["authorization"], `Bearer ${apiKey}`);
      assert.equal(r.headers["content-type"], "application/json");
      assert.equal(r.headers["user-agent"], `acme-billing/2.3 reftrack-js/${VERSION} (node/${process.versions.node})`);
    }
    const pkg = createRequire(import.meta.url)("@reftrack/sdk/package.json");
    assert.equal(VERSION, pkg.version, "the User-Agent's version is the package's");
  });

  test("errors of the platform envelope, each as the service words it", async () => {
    const rt = client();
    const dup = `ts_dup_${run}`;
    await customer(dup);
    const first = await rt.trackSale({ customerExternalId: dup, amount: 100, invoiceId: `ts_dup_in_${run}` });
    assert.equal(first.ok, true, String(first.error));
    const withKey = (k) => new Reftrack({ apiKey: k, baseUrl, logger: null });
    const cases = [
      // 400
      ["lead: unknown click", 400, "BadRequestError", "invalid_request", "Customer not found. Provide a valid click_id or customer_key.",
        () => rt.trackLead({ clickId: "nope" })],
      ["lead: already a customer", 400, "BadRequestError", "invalid_request", "Customer status cannot be updated to lead. Current status: converted",
        () => rt.trackLead({ customerExternalId: dup })],
      ["sale: old occurred_at", 400, "BadRequestError", "invalid_request", "occurred_at must be an ISO 8601 time within the last 30 days",
        () => rt.trackSale({ customerExternalId: dup, amount: 1, invoiceId: `x1_${run}`, occurredAt: new Date(Date.now() - 31 * 86400_000) })],
      ["sale: unknown provider", 400, "BadRequestError", "invalid_request", /^provider must be one of: stripe, /,
        () => rt.trackSale({ customerExternalId: dup, amount: 1, invoiceId: `x2_${run}`, provider: "cash" })],
      ["sale: unknown customer", 400, "BadRequestError", "no_attribution", "Customer not found. Provide customer_key or click_id.",
        () => rt.trackSale({ customerExternalId: `nobody_${run}`, amount: 1, invoiceId: `x3_${run}` })],
      ["refund: more than the sale", 400, "BadRequestError", "invalid_request", "refund_amount_cents must be at most 100, the amount not yet refunded",
        () => rt.trackRefund({ invoiceId: `ts_dup_in_${run}`, refundAmountCents: 101 })],
      // 401
      ["sale: empty key", 401, "UnauthorizedError", "unauthorized", "Missing API token",
        () => withKey("").trackSale({ clickId: "c", amount: 1, invoiceId: `x4_${run}` })],
      ["refund: unknown key", 401, "UnauthorizedError", "unauthorized", "Invalid API token", () => withKey("rt_unknown").trackRefund({ invoiceId: "x" })],
      ["lead: unknown key", 401, "UnauthorizedError", "unauthorized", "Invalid API token", () => withKey("rt_unknown").trackLead({ customerExternalId: dup })],
      // 403
      ["lead: test mode names another program", 403, "ForbiddenError", "forbidden", "program_id does not match the API key",
        () => rt.trackLead({ customerExternalId: dup, additionalData: { test_mode: true, program_id: Number(env("REFTRACK_OTHER_PROGRAM_ID")) } })],
      // 404
      ["refund: no such sale", 404, "NotFoundError", "not_found", "Sale not found for transaction_id", () => rt.trackRefund({ invoiceId: `missing_${run}` })],
      // 409
      ["sale: duplicate", 409, "ConflictError", "duplicate_transaction", "Duplicate transaction_id. This sale has already been recorded.",
        () => rt.trackSale({ customerExternalId: dup, amount: 100, invoiceId: `ts_dup_in_${run}` })],
      // 413
      ["lead: body too large", 413, "PayloadTooLargeError", "payload_too_large", "Request body is larger than the limit of 64 KiB",
        () => rt.trackLead({ customerExternalId: dup, additionalData: { blob: "x".repeat(70 << 10) } })],
      // 422
      ["sale: unsupported currency", 422, "UnprocessableEntityError", "unsupported_currency", "currency GBP is not supported",
        () => rt.trackSale({ customerExternalId: dup, amount: 1, invoiceId: `x5_${run}`, currency: "GBP" })],
    ];
    for (const [what, status, name, code, message, call] of cases) {
      const res = await call();
      try {
        assertFailure(res, { status, name, code, message });
        assert.equal(res.alreadyRecorded, code === "duplicate_transaction");
        if (code === "duplicate_transaction") {
          assert.deepEqual(res.error.details, { sale_id: first.data.sale_id });
          assert.equal(res.error.saleId, first.data.sale_id);
        } else {
          assert.equal(res.error.saleId, undefined);
        }
      } catch (err) {
        err.message = `${what}: ${err.message} (${String(res.error)})`;
        throw err;
      }
    }
  });

  test("a retired key: the typed envelope's 401, its hint, logged once", async () => {
    const logger = memoryLogger();
    const rt = new Reftrack({ apiKey: env("REFTRACK_RETIRED_KEY"), baseUrl, logger });
    for (let i = 0; i < 2; i++) {
      const res = await rt.trackRefund({ invoiceId: `retired_${i}` });
      assertFailure(res, { status: 401, code: "api_key_rotation_required", name: "ReftrackError" });
      assert.ok(res.error.hint, "the typed envelope's hint");
      assert.match(res.error.docsUrl, /^https?:\/\//);
      assert.deepEqual(res.error.details, {});
    }
    assert.equal(logger.lines.filter((l) => l.level === "warn").length, 1, JSON.stringify(logger.lines));
  });

  test("a key marked for rotation still works; its warnings and headers reach the result, logged once", async () => {
    const logger = memoryLogger();
    const key = env("REFTRACK_ROTATING_KEY");
    const rt = new Reftrack({ apiKey: key, baseUrl, logger });
    const deadline = new Date(env("REFTRACK_ROTATING_DEADLINE"));
    for (let i = 0; i < 2; i++) {
      const clickId = await click(env("REFTRACK_ROTATING_AFFILIATE_URL"));
      const res = await rt.trackLead({ customerExternalId: `ts_rot_${i}_${run}`, clickId });
      assert.equal(res.ok, true, String(res.error));
      assert.equal(res.warnings.length, 1);
      const [w] = res.warnings;
      assert.equal(w.code, "api_key_rotation_required");
      assert.equal(new Date(w.rotate_by).getTime(), deadline.getTime());
      assert.ok(w.hint && w.docs_url);
      assert.equal(res.rotation.sunset.getTime(), deadline.getTime());
      assert.ok(res.rotation.markedAt instanceof Date && res.rotation.markedAt.getTime() <= Date.now());
      assert.equal(res.rotation.docsUrl, w.docs_url);
    }
    assert.equal(logger.lines.filter((l) => l.level === "warn").length, 1, JSON.stringify(logger.lines));
  });

  test("real 429s: one beyond the policy comes back at once, one within it is waited out and retried", async () => {
    const key = env("REFTRACK_LIMITED_KEY");
    const cust = `ts_limited_${run}`;
    await customer(cust, { apiKey: key, affiliateUrl: env("REFTRACK_LIMITED_AFFILIATE_URL") });
    const invoice = `ts_limited_in_${run}`;
    const { waits, sleep } = recordingSleep();

    // Retry-After is at least 1 s: beyond a policy of half a second.
    const impatient = new Reftrack({ apiKey: key, baseUrl, logger: null, sleep, retry: { maxRetryAfterMs: 500 } });
    const refused = await impatient.trackSale({ customerExternalId: cust, amount: 700, invoiceId: invoice });
    assertFailure(refused, { status: 429, code: ErrorCodes.rateLimited, name: "ReftrackError", message: /^Too many requests: the limit is 120 per minute\. Retry in \d+ seconds\.$/ });
    assert.ok(refused.error.retryAfterSeconds >= 1 && refused.error.retryAfterSeconds <= 60, `Retry-After ${refused.error.retryAfterSeconds}`);
    assert.deepEqual(waits, []);

    const logger = memoryLogger();
    const patient = new Reftrack({ apiKey: key, baseUrl, logger, sleep });
    const sale = await patient.trackSale({ customerExternalId: cust, amount: 700, invoiceId: invoice });
    assert.equal(sale.ok, true, String(sale.error));
    assert.equal(sale.attempts, 2);
    assert.equal(waits.length, 1);
    assert.ok(waits[0] >= 1000 && waits[0] <= 60_000 && waits[0] % 1000 === 0, `waited ${waits[0]} ms: the Retry-After's seconds`);
    const retried = logger.lines.filter((l) => l.level === "debug");
    assert.equal(retried.length, 1);
    assert.equal(retried[0].m, "reftrack: retrying");
    assert.equal(retried[0].d.op, "sale");
    summary.LimitedInvoice = invoice;
  });

  test("checks made before sending answer with the service's message, and send nothing", async () => {
    let sent = 0;
    const rt = new Reftrack({ apiKey, baseUrl, logger: null, fetch: async () => void sent++ });
    const cases = [
      ["lead without ids", rt.trackLead({ email: "a@example.com" }), "click_id or customer_key is required"],
      ["sale amount zero", rt.trackSale({ customerExternalId: "a", invoiceId: "local_1", amount: 0 }), "amount_cents is required and must be a positive integer"],
      ["sale amount negative", rt.trackSale({ customerExternalId: "a", invoiceId: "local_2", amount: -5 }), "amount_cents is required and must be a positive integer"],
      ["sale amount not an integer", rt.trackSale({ customerExternalId: "a", invoiceId: "local_3", amount: 49.99 }), "amount_cents is required and must be a positive integer"],
      ["sale amount a string", rt.trackSale({ customerExternalId: "a", invoiceId: "local_4", amount: "4900" }), "amount_cents is required and must be a positive integer"],
      ["sale without ids", rt.trackSale({ amount: 5, invoiceId: "local_5" }), "Customer not found. Provide customer_key or click_id."],
      ["sale without invoice", rt.trackSale({ customerExternalId: "a", amount: 5 }), "transaction_id is required and must be a string"],
      ["sale with a blank invoice", rt.trackSale({ customerExternalId: "a", amount: 5, invoiceId: "  " }), "transaction_id is required and must be a string"],
      ["sale at an invalid date", rt.trackSale({ customerExternalId: "a", amount: 5, invoiceId: "local_6", occurredAt: new Date("nope") }), "occurred_at must be an ISO 8601 time within the last 30 days"],
      ["refund without invoice", rt.trackRefund({ reason: "refund" }), "transaction_id is required"],
      ["refund bad reason", rt.trackRefund({ invoiceId: "i", reason: "fraud" }), "reason must be refund or chargeback"],
      ["refund zero amount", rt.trackRefund({ invoiceId: "i", refundAmountCents: 0 }), "refund_amount_cents must be a positive integer"],
      ["refund negative amount", rt.trackRefund({ invoiceId: "i", refundAmountCents: -1 }), "refund_amount_cents must be a positive integer"],
      ["lead whose data cannot be JSON", rt.trackLead({ customerExternalId: "a", additionalData: { n: 1n } }), /BigInt/],
    ];
    for (const [what, pending, message] of cases) {
      const res = await pending;
      try {
        assertFailure(res, { status: 0, code: ErrorCodes.invalidRequest, name: "ReftrackError", message, attempts: 0 });
        assert.equal(res.requestId, null);
        assert.equal(String(res.error), `reftrack: invalid_request: ${res.error.message}`);
      } catch (err) {
        err.message = `${what}: ${err.message}`;
        throw err;
      }
    }
    assert.equal(sent, 0);
  });

  test("retries through faults: refused, lost answers, a load balancer's 503s, a 429, a hang", async () => {
    const cust = `ts_faults_${run}`;
    await customer(cust);
    // The sales the refunds refund, recorded before the faults start (the cases run at once).
    for (const invoice of [`ts_base_${run}`, `ts_base2_${run}`]) {
      const base = await client().trackSale({ customerExternalId: cust, amount: 100, invoiceId: invoice });
      assert.equal(base.ok, true, String(base.error));
    }
    const freshClick = await click();
    const buy = (invoice) => (rt) => rt.trackSale({ customerExternalId: cust, amount: 2500, invoiceId: invoice });
    const cases = [
      { what: "sale after a reset connection", plan: ["reset"], call: buy(`ts_a_${run}`), status: 200, attempts: 2, reached: 1, waits: [[125, 250]] },
      { what: "sale whose answer was lost is reported as already recorded", plan: ["drop"], call: buy(`ts_b_${run}`),
        status: 409, code: "duplicate_transaction", alreadyRecorded: true, attempts: 2, reached: 2, waits: [[125, 250]] },
      { what: "sale through two 503s", plan: ["503", "503"], call: buy(`ts_c_${run}`), status: 200, attempts: 3, reached: 1, waits: [[125, 250], [250, 500]] },
      { what: "sale after a 429, waiting its Retry-After", plan: ["429"], call: buy(`ts_d_${run}`), status: 200, attempts: 2, reached: 1, waits: [[1000, 1000]] },
      { what: "sale gives up after maxAttempts", plan: ["503", "503", "503", "503", "503"], call: buy(`ts_e_${run}`),
        status: 503, code: ErrorCodes.unexpectedResponse, message: "Service Unavailable: <html><body>upstream unavailable</body></html>",
        attempts: 4, reached: 0, waits: [[125, 250], [250, 500], [500, 1000]] },
      { what: "a 4xx is not retried", call: (rt) => rt.trackSale({ customerExternalId: `nobody_${run}`, amount: 1, invoiceId: "x" }),
        status: 400, code: "no_attribution", attempts: 1, reached: 1, waits: [] },
      { what: "lead whose answer was lost answers the documented 400", plan: ["drop"],
        call: (rt) => rt.trackLead({ clickId: freshClick, customerExternalId: `ts_fresh_${run}` }),
        status: 400, code: "invalid_request", message: /^Customer status cannot be updated to lead/, attempts: 2, reached: 2, waits: [[125, 250]] },
      { what: "whole refund whose answer was lost is resent (skipped)", plan: ["drop"], call: (rt) => rt.trackRefund({ invoiceId: `ts_base_${run}` }),
        status: 200, attempts: 2, reached: 2, waits: [[125, 250]], check: (res) => assert.equal(res.data.status, "skipped") },
      { what: "partial refund is not resent after a network failure", plan: ["drop"],
        call: (rt) => rt.trackRefund({ invoiceId: `ts_base2_${run}`, refundAmountCents: 10 }),
        status: 0, code: ErrorCodes.network, message: /^fetch failed/, attempts: 1, reached: 1, waits: [] },
      { what: "partial refund is resent after a 503", plan: ["503"], call: (rt) => rt.trackRefund({ invoiceId: `ts_base2_${run}`, refundAmountCents: 10 }),
        status: 200, attempts: 2, reached: 1, waits: [[125, 250]] },
      // On a loaded machine the retry may time out as well, after the server recorded the sale: then the
      // third attempt answers 409, recorded all the same.
      { what: "an attempt that hangs times out and is retried", plan: ["hang"], options: { timeoutMs: 1000 }, call: buy(`ts_f_${run}`),
        recorded: true },
      { what: "without retries a hang is a network failure saying so", plan: ["hang"], options: { timeoutMs: 500, retry: noRetry },
        call: buy(`ts_g_${run}`), status: 0, code: ErrorCodes.network, message: "no answer within 500 ms", attempts: 1, reached: 0, waits: [] },
    ];
    await Promise.all(
      cases.map(async (c) => {
        const proxy = await faultProxy([...(c.plan ?? [])]);
        try {
          const { waits, sleep } = recordingSleep();
          const rt = new Reftrack({ apiKey, baseUrl: proxy.url, logger: null, sleep, ...c.options });
          const res = await c.call(rt);
          if (c.recorded) {
            assert.ok(res.ok || res.alreadyRecorded, String(res.error));
            assert.ok(res.attempts >= 2 && proxy.seen.length <= res.attempts && proxy.reached() <= res.attempts - 1);
            assert.equal(waits.length, res.attempts - 1);
            return;
          }
          assert.equal(res.status, c.status, String(res.error));
          assert.equal(res.attempts, c.attempts);
          // A request that times out may end before this busy process has even read it.
          if (c.plan?.includes("hang")) assert.ok(proxy.seen.length <= c.attempts, "requests sent");
          else assert.equal(proxy.seen.length, c.attempts, "requests sent");
          assert.equal(proxy.reached(), c.reached, "requests that reached the server");
          assert.equal(res.ok, c.status === 200);
          assert.equal(res.alreadyRecorded, c.alreadyRecorded ?? false);
          if (c.code) assertFailure(res, { status: c.status, code: c.code, message: c.message, attempts: c.attempts });
          else assert.equal(res.error, null);
          assert.equal(waits.length, c.waits.length, `waits ${waits}`);
          c.waits.forEach(([lo, hi], i) => assert.ok(waits[i] >= lo && waits[i] <= hi, `wait ${i + 1}: ${waits[i]} ms, want ${lo}–${hi}`));
          c.check?.(res);
          if (c.what.startsWith("sale whose answer was lost")) summary.LostAnswerInvoice = `ts_b_${run}`;
        } catch (err) {
          err.message = `${c.what}: ${err.message}`;
          throw err;
        } finally {
          proxy.close();
        }
      }),
    );
  });

  test("the default sleep waits a 429's Retry-After on the clock", async () => {
    const proxy = await faultProxy(["429"]);
    after(proxy.close);
    const cust = `ts_clock_${run}`;
    await customer(cust);
    const started = performance.now();
    const res = await new Reftrack({ apiKey, baseUrl: proxy.url, logger: null }).trackSale({ customerExternalId: cust, amount: 300, invoiceId: `ts_clock_in_${run}` });
    const took = performance.now() - started;
    assert.equal(res.ok, true, String(res.error));
    assert.equal(res.attempts, 2);
    assert.ok(took >= 1000, `retried after ${took} ms, before the 1 s Retry-After`);
  });

  test("network failures resolve, saying what happened; the caller's abort ends the call", async () => {
    // A port nothing listens on.
    const closed = http.createServer();
    await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = closed.address().port;
    await new Promise((resolve) => closed.close(resolve));
    const { waits, sleep } = recordingSleep();
    const refused = await new Reftrack({ apiKey, baseUrl: `http://127.0.0.1:${port}`, logger: null, sleep, retry: { maxAttempts: 2 } })
      .trackLead({ customerExternalId: "a" });
    assertFailure(refused, { status: 0, code: ErrorCodes.network, name: "ReftrackError", message: new RegExp(`^fetch failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`), attempts: 2 });
    assert.ok(refused.error.cause instanceof Error);
    assert.equal(waits.length, 1);

    const aborted = new AbortController();
    aborted.abort();
    const proxy = await faultProxy(["503", "503"]);
    after(proxy.close);
    const rt = new Reftrack({ apiKey, baseUrl: proxy.url, logger: null });
    const res = await rt.trackLead({ customerExternalId: "a" }, { signal: aborted.signal });
    assertFailure(res, { status: 0, code: ErrorCodes.network, attempts: 1 });
    assert.equal(proxy.seen.length, 0, "nothing sent once aborted");

    // Aborted while waiting between attempts: the last answer comes back at once.
    const during = new AbortController();
    const waiting = new Reftrack({ apiKey, baseUrl: proxy.url, logger: null, sleep: async () => during.abort() });
    const last = await waiting.trackLead({ customerExternalId: "a" }, { signal: during.signal });
    assertFailure(last, { status: 503, code: ErrorCodes.unexpectedResponse, attempts: 1 });
  });

  test("base URL: the option, REFTRACK_BASE_URL, else localhost:8080", () => {
    assert.equal(new Reftrack({ apiKey, baseUrl: "https://track.example.com//" }).baseUrl, "https://track.example.com");
    assert.equal(new Reftrack({ apiKey }).baseUrl, baseUrl);
    const saved = process.env.REFTRACK_BASE_URL;
    delete process.env.REFTRACK_BASE_URL;
    try {
      assert.equal(new Reftrack({ apiKey }).baseUrl, "http://localhost:8080");
    } finally {
      process.env.REFTRACK_BASE_URL = saved;
    }
    assert.deepEqual(defaultRetryPolicy, { maxAttempts: 4, minBackoffMs: 250, maxBackoffMs: 5000, maxRetryAfterMs: 60_000 });
  });

  test("webhooks: deliveries of this server verified on a receiver, before and after a secret rotation", async () => {
    const got = [];
    const receiver = http.createServer(async (req, res) => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      got.push({ headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
    await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    after(() => receiver.close());
    const account = { Authorization: `Bearer ${env("REFTRACK_ACCOUNT_TOKEN")}`, "Content-Type": "application/json" };
    const api = async (path, body) => {
      const res = await fetch(baseUrl + path, body === undefined ? { method: "POST", headers: { Authorization: account.Authorization } }
        : { method: "POST", headers: account, body: JSON.stringify(body) });
      const json = await res.json();
      assert.ok(res.status === 201 || res.status === 202 || res.status === 200, `${path}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    const endpoint = await api(`/api/v1/programs/${env("REFTRACK_PROGRAM_ID")}/webhook-endpoints`, {
      url: `http://127.0.0.1:${receiver.address().port}/hooks`,
      events: ["partner.created"],
    });
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const deliver = async (eventType) => {
      const queued = await api(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { event_type: eventType });
      const res = await fetch(`${env("REFTRACK_CONTROL_URL")}/deliver`, { method: "POST" });
      assert.equal(res.status, 200, await res.text());
      const d = got.find((g) => g.headers["webhook-id"] === queued.webhook_id);
      assert.ok(d, `no delivery of ${queued.webhook_id} among ${got.length}`);
      return d;
    };

    const first = await deliver("sale.created");
    const ev = await verifyWebhook(endpoint.secret, first.headers, first.body);
    assert.equal(ev.id, first.headers["webhook-id"]);
    assert.match(ev.id, /^msg_/);
    assert.equal(ev.type, "sale.created");
    assert.equal(ev.data.is_test, true);
    assert.ok(Math.abs(ev.attempted.getTime() - Date.now()) < 60_000);
    assert.ok(ev.timestamp instanceof Date && !Number.isNaN(ev.timestamp.getTime()));
    assert.match(first.headers["user-agent"], /^reftrack-webhooks\//);
    // The same delivery as a fetch Headers and a string body, and the secret without its prefix.
    const asHeaders = new Headers();
    for (let i = 0; i < first.rawHeaders.length; i += 2) asHeaders.append(first.rawHeaders[i], first.rawHeaders[i + 1]);
    assert.equal((await verifyWebhook(endpoint.secret.slice("whsec_".length), asHeaders, first.body.toString())).id, ev.id);
    assert.equal((await verifyWebhook(endpoint.secret, first.headers, new Uint8Array(first.body).buffer)).id, ev.id);
    // Refused: a changed body, another secret, a replay after 6 minutes.
    const tampered = Buffer.from(first.body.toString().replace('"is_test":true', '"is_test":false'));
    assert.notDeepEqual(tampered, first.body);
    await assert.rejects(verifyWebhook(endpoint.secret, first.headers, tampered), { name: "WebhookVerificationError", reason: "signature" });
    await assert.rejects(verifyWebhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, first.headers, first.body), { reason: "signature" });
    await assert.rejects(verifyWebhook(endpoint.secret, first.headers, first.body, { now: Date.now() + 6 * 60_000 }), { reason: "timestamp" });

    // After a rotation, deliveries carry both signatures for 24 hours: either secret verifies.
    const rotated = await api(`/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    assert.notEqual(rotated.secret, endpoint.secret);
    const second = await deliver("commission.created");
    assert.equal(second.headers["webhook-signature"].split(" ").length, 2);
    for (const secret of [rotated.secret, endpoint.secret]) {
      const e = await verifyWebhook(secret, second.headers, second.body);
      assert.equal(e.type, "commission.created");
    }
    webhookDeliveries.push({ secret: rotated.secret, ...second });
  });

  test("Standard Webhooks' test vectors", async () => {
    // The specification's own vector (its libraries' "sign function works" test): a signature over a
    // body that is no event, so the SDK accepts signature and timestamp and then refuses the body.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const ts = "1614265330";
    const payload = '{"test": 2432232314}';
    const sig = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    const at = Number(ts) * 1000;
    const h = (over = {}) => ({ "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig, ...over });
    const other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
    const vectors = [
      ["valid", secret, h(), payload, at, "body"],
      ["valid without the whsec_ prefix", secret.slice(6), h(), payload, at, "body"],
      ["several signatures, one valid", secret, h({ "webhook-signature": [other, other.replace("v1", "v2"), sig, other].join(" ") }), payload, at, "body"],
      ["a changed payload", secret, h(), payload.replace("2432232314", "2432232315"), at, "signature"],
      ["missing id", secret, h({ "webhook-id": undefined }), payload, at, "headers"],
      ["missing timestamp", secret, h({ "webhook-timestamp": undefined }), payload, at, "headers"],
      ["missing signature", secret, h({ "webhook-signature": undefined }), payload, at, "headers"],
      ["invalid timestamp", secret, h({ "webhook-timestamp": "hello" }), payload, at, "headers"],
      ["invalid signature", secret, h({ "webhook-signature": "v1,dawfeoifkpqwoekfpqoekf" }), payload, at, "signature"],
      ["partial signature", secret, h({ "webhook-signature": sig.slice(0, 8) }), payload, at, "signature"],
      ["empty v1 signature", secret, h({ "webhook-signature": "v1," }), payload, at, "signature"],
      ["empty secret", "", h(), payload, at, "secret"],
      ["only the prefix", "whsec_", h(), payload, at, "secret"],
      ["5 min 1 s later", secret, h(), payload, at + 301_000, "timestamp"],
      ["5 min 1 s earlier", secret, h(), payload, at - 301_000, "timestamp"],
      ["5 min later", secret, h(), payload, at + 300_000, "body"],
    ];
    for (const [what, s, headers, body, now, reason] of vectors) {
      await assert.rejects(verifyWebhook(s, headers, body, { now }), (err) => {
        assert.ok(err instanceof WebhookVerificationError, `${what}: ${err}`);
        assert.equal(err.reason, reason, `${what}: ${err.message}`);
        return true;
      });
    }

    // An event signed as the specification says, by node:crypto: accepted, decoded.
    const event = JSON.stringify({ type: "payout.paid", timestamp: "2026-11-27T10:00:00.123456Z", data: { id: 7, amount_cents: 980 } });
    const now = Math.floor(Date.now() / 1000);
    const sign = (key, body, t = now) => `v1,${createHmac("sha256", Buffer.from(key.slice(6), "base64")).update(`${id}.${t}.${body}`).digest("base64")}`;
    const ok = await verifyWebhook(secret, h({ "webhook-timestamp": String(now), "webhook-signature": sign(secret, event) }), event);
    assert.deepEqual(ok, { id, type: "payout.paid", timestamp: new Date("2026-11-27T10:00:00.123Z"), data: { id: 7, amount_cents: 980 }, attempted: new Date(now * 1000) });
    const signed = (body) => h({ "webhook-timestamp": String(now), "webhook-signature": sign(secret, body) });
    for (const [what, body] of [
      ["not JSON", "not json"],
      ["no type", '{"timestamp": "2026-11-27T10:00:00Z", "data": {}}'],
      ["no data", '{"type": "x", "timestamp": "2026-11-27T10:00:00Z"}'],
      ["a Unix timestamp", '{"type": "x", "timestamp": 1750000000, "data": {}}'],
    ]) {
      await assert.rejects(verifyWebhook(secret, signed(body), body), { reason: "body" }, what);
    }
    // Header lines repeated (Node joins them with ", "), names in any case, a timestamp with a sign.
    const two = [sign(`whsec_${Buffer.alloc(32, 1).toString("base64")}`, event), sign(secret, event)];
    assert.equal((await verifyWebhook(secret, { "Webhook-Id": id, "WEBHOOK-TIMESTAMP": String(now), "webhook-signature": two }, event)).id, id);
    assert.equal((await verifyWebhook(secret, { "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": two.join(", ") }, event)).id, id);
    await assert.rejects(verifyWebhook(secret, h({ "webhook-timestamp": `+${now}`, "webhook-signature": sign(secret, event, `+${now}`) }), event), { reason: "headers" });
    webhookVectors.push({ secret, headers: signed(event), body: event });
  });
});

// Filled by the concurrent tests for the sequential ones below.
const webhookDeliveries = [];
const webhookVectors = [];

describe("one at a time", () => {
  test("a 500 is retried, except Failed to create commission", async () => {
    await customer(`ts_500_${run}`);
    const { waits, sleep } = recordingSleep();
    const rt = client({ sleep });
    const once = await rt.trackSale({ customerExternalId: `ts_500_${run}`, amount: 100, invoiceId: "ts_fail_once" });
    assert.equal(once.ok, true, String(once.error));
    assert.equal(once.attempts, 2);
    assert.equal(waits.length, 1);
    assert.ok(waits[0] >= 125 && waits[0] <= 250, `waited ${waits[0]} ms`);

    await customer(`ts_commission_${run}`);
    const failed = await rt.trackSale({ customerExternalId: `ts_commission_${run}`, amount: 100, invoiceId: "ts_commission_fails" });
    assertFailure(failed, { status: 500, code: "internal_error", name: "InternalServerError", message: "Failed to create commission" });
    assert.equal(waits.length, 1, "not retried");
  });

  test("verifyWebhook without WebCrypto (Node 18 without its flag): the portable SHA-256 agrees", async () => {
    assert.ok(webhookDeliveries.length === 1 && webhookVectors.length === 1, "the webhook tests ran first");
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, "crypto");
    delete globalThis.crypto;
    try {
      assert.equal(globalThis.crypto, undefined);
      const [d] = webhookDeliveries;
      assert.equal((await verifyWebhook(d.secret, d.headers, d.body)).type, "commission.created");
      await assert.rejects(verifyWebhook(d.secret, d.headers, Buffer.concat([d.body, Buffer.from(" ")])), { reason: "signature" });
      const [v] = webhookVectors;
      assert.equal((await verifyWebhook(v.secret, v.headers, v.body)).type, "payout.paid");
      // Lengths around SHA-256's 64-byte blocks and keys longer than a block, against node:crypto.
      for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
        const key = Buffer.alloc(n % 3 === 0 ? 100 : 32, n + 1);
        const secret = `whsec_${key.toString("base64")}`;
        const body = JSON.stringify({ type: "t", timestamp: "2026-11-27T10:00:00Z", data: { pad: "é".repeat(n) } });
        const now = 1_750_000_000;
        const sig = createHmac("sha256", key).update(`msg_1.${now}.${body}`).digest("base64");
        const e = await verifyWebhook(secret, { "webhook-id": "msg_1", "webhook-timestamp": String(now), "webhook-signature": `v1,${sig}` }, body, { now: now * 1000 });
        assert.equal(e.type, "t", `body of ${n}`);
      }
    } finally {
      Object.defineProperty(globalThis, "crypto", descriptor);
    }
  });

  test("the README's quick start, from the installed package", async () => {
    const readme = readFileSync(env("REFTRACK_README"), "utf8");
    const m = readme.match(/<!-- quickstart[^>]*-->\s*```js\n([\s\S]*?)```\s*<!-- \/quickstart -->/);
    assert.ok(m, "the README has a quick start between <!-- quickstart --> and <!-- /quickstart -->");
    const program = m[1];
    assert.ok(program.split("\n").length < 15, "a quick start of under 15 lines");
    const file = new URL("./quickstart.mjs", import.meta.url);
    writeFileSync(file, program);
    process.env.CLICK_ID = await click();
    const printed = [];
    const log = console.log;
    console.log = (...args) => printed.push(args.join(" "));
    try {
      await import(file.href);
    } finally {
      console.log = log;
    }
    assert.deepEqual(printed, ["lead: 200 | sale: 200 | refund: 200"]);
    // Twice: the invoice is recorded once, however often it is sent.
    console.log = (...args) => printed.push(args.join(" "));
    try {
      await import(`${file.href}?again`);
    } finally {
      console.log = log;
    }
    assert.match(printed[1], /^lead: 400 \| sale: 409 \| refund: 200$/);
  });
});
