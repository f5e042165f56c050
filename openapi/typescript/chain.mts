// An independent client of reftrack, written by no one here: openapi-typescript generates `schema.d.ts`
// from the spec the server serves, tsc type-checks this script against it, and openapi-fetch sends
// click → lead → sale → refund (with a duplicate sale and an unknown refund) to a live server.
//
// Run by openapi/typescript/typescript_test.go; it prints one JSON line with the ids it saw.
// Environment: REFTRACK_BASE_URL, REFTRACK_API_KEY, AFFILIATE_URL.
import assert from "node:assert/strict";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type SaleRecorded = components["schemas"]["SaleRecorded"];

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const baseUrl = env("REFTRACK_BASE_URL");
const browser = createClient<paths>({ baseUrl });
const backend = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${env("REFTRACK_API_KEY")}` } });
const customer = `ts_${Date.now()}`;
const invoice = `ts_in_${Date.now()}`;

// 1. Click, as the browser tracker reports it.
const click = await browser.POST("/api/v1/track/click", { body: { affiliate_url: env("AFFILIATE_URL"), page_title: "Pricing" } });
assert.equal(click.response.status, 200, `click: ${JSON.stringify(click.error)}`);
assert.ok(click.data);
assert.equal(click.data.success, true);
assert.match(click.data.click_id, /^[A-Za-z0-9_-]{22,}$/);
assert.ok(click.data.cookie_window_days > 0);
assert.ok(click.response.headers.get("x-request-id"));
const clickId = click.data.click_id;

// 2. Lead, from the brand's backend (server mode).
const lead = await backend.POST("/api/v1/track/lead", { body: { click_id: clickId, customer_key: customer, email: "ts@example.com" } });
assert.equal(lead.response.status, 200, `lead: ${JSON.stringify(lead.error)}`);
assert.ok(lead.data);
assert.equal(lead.data.message, "Lead tracked successfully");
assert.equal(lead.data.attribution.click_id, clickId);
assert.equal(typeof lead.data.lead_id, "number");

// 3. Sale: recorded, with its commission (20% of 4900).
const sale = await backend.POST("/api/v1/track/sale", {
  body: { transaction_id: invoice, amount_cents: 4900, currency: "USD", customer_key: customer, provider: "stripe" },
});
assert.equal(sale.response.status, 200, `sale: ${JSON.stringify(sale.error)}`);
assert.ok(sale.data && "sale_id" in sale.data && sale.data.sale_id !== null, "the sale was not recorded");
const recorded: SaleRecorded = sale.data as SaleRecorded;
assert.equal(recorded.message, "Sale tracked successfully");
assert.equal(recorded.transaction_id, invoice);
assert.equal(recorded.commission?.amount_cents, 980);
assert.equal(recorded.attribution.click_id, clickId);

// 4. The same invoice again: 409 duplicate_transaction naming the recorded sale.
const dup = await backend.POST("/api/v1/track/sale", { body: { transaction_id: invoice, amount_cents: 4900, customer_key: customer } });
assert.equal(dup.response.status, 409);
assert.ok(dup.error && "data" in dup.error);
assert.equal(dup.error.data, null);
assert.equal(dup.error.error.code, "duplicate_transaction");
assert.equal(dup.error.error.message, "Duplicate transaction_id. This sale has already been recorded.");
assert.equal(dup.error.error.details.sale_id, recorded.sale_id);

// 5. Refund: the commission is reversed.
const refund = await backend.POST("/api/v1/track/refund", { body: { transaction_id: invoice, reason: "refund" } });
assert.equal(refund.response.status, 200, `refund: ${JSON.stringify(refund.error)}`);
assert.ok(refund.data);
assert.equal(refund.data.status, "reversed");
assert.equal(refund.data.refunded_amount_cents, 4900);
assert.equal(refund.data.commission?.status, "reversed");

// 6. A refund of an unknown invoice: 404 not_found.
const missing = await backend.POST("/api/v1/track/refund", { body: { transaction_id: `${invoice}_unknown` } });
assert.equal(missing.response.status, 404);
assert.ok(missing.error && "data" in missing.error);
assert.equal(missing.error.error.code, "not_found");
assert.equal(missing.error.error.message, "Sale not found for transaction_id");

console.log(JSON.stringify({ click_id: clickId, customer_key: customer, lead_id: lead.data.lead_id, sale_id: recorded.sale_id, transaction_id: invoice }));
