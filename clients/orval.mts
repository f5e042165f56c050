// orval (its fetch client): the six calls against a live server. Run by clients_test.go.
import assert from "node:assert/strict";
import { getReadiness, trackClick, trackLead, trackRefund, trackSale } from "./gen/orval/api.js";
import { affiliateUrl, apiKey, baseUrl, customer, invoice, report } from "./common.mjs";

// orval's fetch client calls the operation's path as it is: resolve it against the server.
const fetchOf = globalThis.fetch;
globalThis.fetch = (input, init) => fetchOf(typeof input === "string" ? new URL(input, baseUrl) : input, init);
const withKey = { headers: { Authorization: `Bearer ${apiKey}` } };

const click = await trackClick({ affiliate_url: affiliateUrl });
assert.equal(click.status, 200, `click: ${JSON.stringify(click.data)}`);
if (click.status !== 200) throw new Error("unreachable");
const clickId = click.data.click_id;

const lead = await trackLead({ click_id: clickId, customer_key: customer, email: "orval@example.com" }, withKey);
if (lead.status !== 200) throw new Error(`lead: ${lead.status} ${JSON.stringify(lead.data)}`);
assert.equal(lead.data.attribution.click_id, clickId);

const sale = await trackSale({ transaction_id: invoice, amount_cents: 4900, currency: "USD", customer_key: customer }, withKey);
if (sale.status !== 200) throw new Error(`sale: ${sale.status} ${JSON.stringify(sale.data)}`);
assert.ok("transaction_id" in sale.data, "the sale was not recorded");
const saleId = sale.data.sale_id;
assert.equal(sale.data.commission?.amount_cents, 980);

// The error's type is the one its status documents.
const dup = await trackSale({ transaction_id: invoice, amount_cents: 4900, customer_key: customer }, withKey);
if (dup.status !== 409) throw new Error(`duplicate: ${dup.status} ${JSON.stringify(dup.data)}`);
assert.equal(dup.data.data, null);
assert.equal(dup.data.error.code, "duplicate_transaction");

const refund = await trackRefund({ transaction_id: invoice }, withKey);
if (refund.status !== 200) throw new Error(`refund: ${refund.status} ${JSON.stringify(refund.data)}`);
assert.equal(refund.data.status, "reversed");

const ready = await getReadiness(withKey);
if (ready.status !== 200) throw new Error(`readiness: ${ready.status} ${JSON.stringify(ready.data)}`);

report({ click_id: clickId, customer_key: customer, lead_id: lead.data.lead_id, sale_id: saleId, transaction_id: invoice, readiness_program_id: ready.data.program_id });
