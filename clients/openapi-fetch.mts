// openapi-typescript types + openapi-fetch: the six calls (click, server-mode lead, sale, the duplicate
// sale's typed 409, refund, readiness) against a live server. Run by clients_test.go.
import assert from "node:assert/strict";
import createClient from "openapi-fetch";
import type { paths } from "./gen/openapi-fetch/schema.js";
import { affiliateUrl, apiKey, baseUrl, customer, invoice, report } from "./common.mjs";

const browser = createClient<paths>({ baseUrl });
const backend = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

const click = await browser.POST("/api/v1/track/click", { body: { affiliate_url: affiliateUrl } });
assert.equal(click.response.status, 200, `click: ${JSON.stringify(click.error)}`);
assert.ok(click.data);
const clickId = click.data.click_id;

const lead = await backend.POST("/api/v1/track/lead", { body: { click_id: clickId, customer_key: customer, email: "of@example.com" } });
assert.ok(lead.data, `lead: ${JSON.stringify(lead.error)}`);
assert.equal(lead.data.attribution.click_id, clickId);

const sale = await backend.POST("/api/v1/track/sale", { body: { transaction_id: invoice, amount_cents: 4900, currency: "USD", customer_key: customer } });
assert.ok(sale.data, `sale: ${JSON.stringify(sale.error)}`);
assert.ok("transaction_id" in sale.data, "the sale was not recorded");
const saleId = sale.data.sale_id;
assert.equal(sale.data.commission?.amount_cents, 980);

const dup = await backend.POST("/api/v1/track/sale", { body: { transaction_id: invoice, amount_cents: 4900, customer_key: customer } });
assert.equal(dup.response.status, 409);
assert.ok(dup.error && "data" in dup.error, `duplicate: ${JSON.stringify(dup.error)}`);
assert.equal(dup.error.data, null);
assert.equal(dup.error.error.code, "duplicate_transaction");

const refund = await backend.POST("/api/v1/track/refund", { body: { transaction_id: invoice } });
assert.ok(refund.data, `refund: ${JSON.stringify(refund.error)}`);
assert.equal(refund.data.status, "reversed");

const ready = await backend.GET("/api/v1/programs/me/readiness");
assert.ok(ready.data, `readiness: ${JSON.stringify(ready.error)}`);

report({ click_id: clickId, customer_key: customer, lead_id: lead.data.lead_id, sale_id: saleId, transaction_id: invoice, readiness_program_id: ready.data.program_id });
