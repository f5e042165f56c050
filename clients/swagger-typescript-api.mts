// swagger-typescript-api (its fetch client): the six calls against a live server. Run by clients_test.go.
import assert from "node:assert/strict";
import { Api, type HttpResponse } from "./gen/swagger-typescript-api/api.js";
import { affiliateUrl, apiKey, baseUrl, customer, invoice, report } from "./common.mjs";

// The security worker adds the key to every operation whose security names one (`secure`).
const api = new Api<string>({ baseUrl, securityWorker: (key) => (key ? { headers: { Authorization: `Bearer ${key}` } } : {}) });
api.setSecurityData(apiKey);
// Unconfigured, the client reaches the instance `make run` serves (the spec's first server).
assert.equal(new Api().baseUrl, "http://localhost:8080");

// The click's key is optional (test mode only): this one goes without it.
const click = await api.api.trackClick({ affiliate_url: affiliateUrl }, { secure: false });
const clickId = click.data.click_id;

const lead = await api.api.trackLead({ click_id: clickId, customer_key: customer, email: "sta@example.com" });
assert.equal(lead.data.attribution.click_id, clickId);

const saleBody = { transaction_id: invoice, amount_cents: 4900, currency: "USD", customer_key: customer };
const sale = await api.api.trackSale(saleBody);
assert.ok("transaction_id" in sale.data, "the sale was not recorded");
const saleId = sale.data.sale_id;
assert.equal(sale.data.success, true);
assert.equal(sale.data.commission?.amount_cents, 980);

// A refused request rejects with the response, whose `error` has the operation's error type.
type SaleError = Awaited<ReturnType<typeof api.api.trackSale>>["error"];
const dup = await api.api.trackSale(saleBody).then(
  (res) => assert.fail(`the duplicate was accepted: ${JSON.stringify(res.data)}`),
  (res: HttpResponse<unknown, SaleError>) => res,
);
assert.equal(dup.status, 409);
assert.ok("data" in dup.error, `duplicate: ${JSON.stringify(dup.error)}`);
assert.equal(dup.error.data, null);
assert.equal(dup.error.error.code, "duplicate_transaction");

const refund = await api.api.trackRefund({ transaction_id: invoice });
assert.equal(refund.data.status, "reversed");

const ready = await api.api.getReadiness();

report({ click_id: clickId, customer_key: customer, lead_id: lead.data.lead_id, sale_id: saleId, transaction_id: invoice, readiness_program_id: ready.data.program_id });
