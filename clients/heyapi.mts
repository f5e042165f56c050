// @hey-api/openapi-ts (its fetch client): the six calls against a live server. Run by clients_test.go.
import assert from "node:assert/strict";
import { client } from "./gen/heyapi/client.gen.js";
import { getReadiness, trackClick, trackLead, trackRefund, trackSale } from "./gen/heyapi/sdk.gen.js";
import { affiliateUrl, apiKey, baseUrl, customer, invoice, report } from "./common.mjs";

// Unconfigured, the client reaches the instance `make run` serves (the spec's first server).
assert.equal(client.getConfig().baseUrl, "http://localhost:8080");

// The key goes only where the operation's security asks for programKey (never to the click here).
client.setConfig({ baseUrl, auth: (a) => (a.scheme === "bearer" && a.type === "http" ? apiKey : undefined) });

const click = await trackClick({ body: { affiliate_url: affiliateUrl }, security: [] });
assert.ok(click.data, `click: ${JSON.stringify(click.error)}`);
const clickId = click.data.click_id;

const lead = await trackLead({ body: { click_id: clickId, customer_key: customer, email: "hey@example.com" } });
assert.ok(lead.data, `lead: ${JSON.stringify(lead.error)}`);
assert.equal(lead.data.attribution.click_id, clickId);

const sale = await trackSale({ body: { transaction_id: invoice, amount_cents: 4900, currency: "USD", customer_key: customer } });
assert.ok(sale.data, `sale: ${JSON.stringify(sale.error)}`);
assert.ok("transaction_id" in sale.data, "the sale was not recorded");
const saleId = sale.data.sale_id;
assert.equal(sale.data.commission?.amount_cents, 980);

const dup = await trackSale({ body: { transaction_id: invoice, amount_cents: 4900, customer_key: customer } });
assert.equal(dup.response?.status, 409);
assert.ok(dup.error && "data" in dup.error, `duplicate: ${JSON.stringify(dup.error)}`);
assert.equal(dup.error.error.code, "duplicate_transaction");

const refund = await trackRefund({ body: { transaction_id: invoice } });
assert.ok(refund.data, `refund: ${JSON.stringify(refund.error)}`);
assert.equal(refund.data.status, "reversed");

const ready = await getReadiness();
assert.ok(ready.data, `readiness: ${JSON.stringify(ready.error)}`);

report({ click_id: clickId, customer_key: customer, lead_id: lead.data.lead_id, sale_id: saleId, transaction_id: invoice, readiness_program_id: ready.data.program_id });
