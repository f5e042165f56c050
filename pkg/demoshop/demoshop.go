// Package demoshop is the brand that `make run` plays: a small shop page at / that loads the tracker, shows
// the click a referral URL recorded and its partner, and whose backend reports a sign-up and a purchase
// the way a brand's backend does, server-side through the Go SDK with the program's key. Development
// mode only: it exists so that a newcomer goes from `make run` to a commission in the dashboard by
// clicking.
package demoshop

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/sdk"
)

// Shop is the demo program's shop.
type Shop struct {
	DB        *sqlx.DB
	ProgramID int64
	// Brand reports leads and sales as the brand's backend would: the Go SDK with the program's key,
	// aimed at this server.
	Brand *sdk.Client
}

// PriceCents is what Buy charges (USD).
const PriceCents = 4900

// Errors a visitor can meet.
var (
	ErrNoClick  = errors.New("No referral click yet: open the referral URL first")
	ErrNoSignUp = errors.New("Sign up first")
	errNoAnswer = errors.New("the sale was not recorded")
)

// RefusedError is reftrack refusing what the shop reported (a 4xx): the visitor's doing, said as such.
type RefusedError struct{ Message string }

func (e *RefusedError) Error() string { return e.Message }

// reported turns a Track call's outcome into an error: a refusal is a RefusedError.
func reported(what string, r sdk.Result) error {
	if r.Error == nil {
		return nil
	}
	if (r.Status >= 400 && r.Status < 500) || r.Error.Code == sdk.CodeInvalidRequest { // refused there, or by the SDK before sending
		return &RefusedError{Message: r.Error.Message}
	}
	return fmt.Errorf("report the %s: %w", what, r.Err())
}

// Session is what the shop knows of a browser.
type Session struct {
	ClickID     *string
	Partner     *string
	CustomerKey *string
}

// Visitor answers the browser's click (if recorded in the demo program) and its partner's name.
func (s *Shop) Visitor(ctx context.Context, clickID, customerKey string) (Session, error) {
	var out Session
	if customerKey != "" {
		out.CustomerKey = &customerKey
	}
	if clickID == "" {
		return out, nil
	}
	var partner string
	err := s.DB.GetContext(ctx, &partner, `SELECT pa.name FROM clicks c JOIN partners pa ON pa.id = c.partner_id
		WHERE c.click_id = $1 AND c.program_id = $2`, clickID, s.ProgramID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return out, nil
	case err != nil:
		return Session{}, err
	}
	out.ClickID, out.Partner = &clickID, &partner
	return out, nil
}

// SignUp makes a demo customer for the browser's click and reports the sign-up as a server-mode lead.
func (s *Shop) SignUp(ctx context.Context, clickID string) (customerKey string, leadID int64, partnerID *int64, err error) {
	if v, err := s.Visitor(ctx, clickID, ""); err != nil || v.ClickID == nil {
		if err != nil {
			return "", 0, nil, err
		}
		return "", 0, nil, ErrNoClick // none, or not this program's
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", 0, nil, err
	}
	customerKey = "demo-customer-" + hex.EncodeToString(b)
	r := s.Brand.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: customerKey, ClickID: clickID,
		Email: customerKey + "@shop.example"})
	if err := reported("sign-up", r); err != nil {
		return "", 0, nil, err
	}
	if r.Lead == nil || r.Lead.LeadId == nil {
		return "", 0, nil, errNoAnswer
	}
	return customerKey, *r.Lead.LeadId, r.Lead.Attribution.PartnerId, nil
}

// Buy reports a payment of the signed-up customer as a sale.
func (s *Shop) Buy(ctx context.Context, customerKey string) (saleID, amountCents int64, commissionCents *int64, err error) {
	if !strings.HasPrefix(customerKey, "demo-customer-") { // none, or not one SignUp made
		return 0, 0, nil, ErrNoSignUp
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return 0, 0, nil, err
	}
	r := s.Brand.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: customerKey, AmountCents: PriceCents, Currency: "USD",
		InvoiceID: "demo-order-" + hex.EncodeToString(b)})
	if err := reported("payment", r); err != nil {
		return 0, 0, nil, err
	}
	if r.Sale == nil {
		return 0, 0, nil, errNoAnswer
	}
	if c := r.Sale.Commission; c != nil {
		commissionCents = &c.AmountCents
	}
	return r.Sale.SaleId, r.Sale.AmountCents, commissionCents, nil
}

// Page is the shop's page: the tracker tag of the demo program, and the buttons.
func (s *Shop) Page() ([]byte, error) {
	var b strings.Builder
	if err := page.Execute(&b, struct{ ProgramID int64 }{s.ProgramID}); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

var page = template.Must(template.New("shop").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo shop · reftrack</title>
<script defer src="/js/svc.js" data-svc-program-id="{{.ProgramID}}"></script>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
.box { border: 1px solid #ddd; border-radius: 8px; padding: 1rem; margin: 1rem 0; }
button { font: inherit; padding: .5rem 1rem; margin-right: .5rem; }
.muted { color: #777; }
</style>
</head>
<body>
<h1>Demo shop</h1>
<p class="muted">The brand <code>make run</code> plays. This page loads the reftrack tracker; its buttons call this
shop's backend, which reports the sign-up and the purchase to reftrack with the Go SDK and the program's key.</p>
<div class="box" id="referral">Waiting for the tracker…</div>
<div class="box">
<button id="signup" type="button">Sign up</button>
<button id="buy" type="button">Buy (USD 49.00)</button>
<p id="result" class="muted"></p>
</div>
<p><a href="/dashboard">Open the dashboard</a> (sign in as the demo account) to see the click, the lead and the
sale with its commission. <a href="/docs">API reference</a>.</p>
<script>
"use strict";
(function () {
  function $(id) { return document.getElementById(id); }
  function call(method, path) {
    return fetch(path, { method: method, credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (res) {
        return res.json().then(function (body) {
          if (!res.ok) throw new Error((body.error && body.error.message) || body.message || "Request failed");
          return body;
        });
      });
  }
  function show(text) { $("result").textContent = text; }
  var tries = 0;
  function refresh() {
    return call("GET", "/demo/session").then(function (s) {
      if (s.click_id) {
        $("referral").textContent = "Referred by " + s.partner + " (click " + s.click_id + ")";
        $("referral").dataset.click = s.click_id;
        return;
      }
      $("referral").textContent = tries > 10 ? "No referral click: open the referral URL that make run printed." : "Waiting for the tracker…";
      if (tries++ < 40) setTimeout(refresh, 250);
    }).catch(function (e) { show(e.message); });
  }
  $("signup").addEventListener("click", function () {
    call("POST", "/demo/signup").then(function (r) {
      document.cookie = "demo_customer=" + encodeURIComponent(r.customer_key) + "; path=/; SameSite=Lax";
      show("Signed up as " + r.customer_key + " (lead " + r.lead_id + ")");
    }).catch(function (e) { show(e.message); });
  });
  $("buy").addEventListener("click", function () {
    call("POST", "/demo/buy").then(function (r) {
      var c = r.commission_cents == null ? "no commission" : "commission USD " + (r.commission_cents / 100).toFixed(2);
      show("Bought: sale " + r.sale_id + ", " + c + " for the partner");
    }).catch(function (e) { show(e.message); });
  });
  refresh();
})();
</script>
</body>
</html>
`))
