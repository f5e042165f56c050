package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reftrack/reftrack/gen/client"
)

// The track_* tools of `reftrack mcp` (mcp.go), one section each, with their input and output types; the
// other tools are in mcp_tools.go.

// track_click

type clickIn struct {
	AffiliateURL string `json:"affiliate_url,omitempty" jsonschema:"the landing page URL with the aff query parameter, e.g. https://shop.example.com/?aff=SHORT_LINK"`
	ShortLink    string `json:"short_link,omitempty" jsonschema:"a referral link's short link (its aff value), when affiliate_url is not given"`
	Live         bool   `json:"live,omitempty" jsonschema:"record a real click instead of a test one; only when the user asks"`
}

type clickOut struct {
	ClickID          string   `json:"click_id" jsonschema:"pass it to track_lead (the tracker keeps it in the svc_click_id cookie)"`
	ShortLink        string   `json:"short_link,omitempty"`
	ProgramID        int64    `json:"program_id,omitempty" jsonschema:"the link's program (test clicks)"`
	CookieWindowDays int      `json:"cookie_window_days"`
	Test             bool     `json:"test"`
	AffiliateURL     string   `json:"affiliate_url"`
	Warnings         []string `json:"warnings,omitempty"`
}

func (t *mcpTools) trackClick(ctx context.Context, _ *mcp.CallToolRequest, in clickIn) (*mcp.CallToolResult, clickOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, clickOut{}, toolError(err)
	}
	affURL := in.AffiliateURL
	if affURL == "" {
		if in.ShortLink == "" {
			return nil, clickOut{}, toolError(&userError{Message: "say which referral link: affiliate_url (a landing URL with ?aff=SHORT_LINK) or short_link",
				Next: "run_verification's answer names the program's test link (short_code); `reftrack links list` lists the program's links."})
		}
		st, err := call[client.CliStatusResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
			return api.CliStatus(ctx, &client.CliStatusParams{})
		})
		if err != nil {
			return nil, clickOut{}, toolError(err)
		}
		affURL = (&url.URL{Scheme: "https", Host: st.Data.Domain, Path: "/", RawQuery: "aff=" + url.QueryEscape(in.ShortLink)}).String()
	}
	// A test click carries the key (test mode may authenticate with it); a live one is the browser's, keyless.
	if in.Live {
		to.token = ""
	}
	r, err := call[client.ClickResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.TrackClick(ctx, client.ClickRequest{AffiliateUrl: affURL, AdditionalData: testData(in.Live)})
	})
	if err != nil {
		return nil, clickOut{}, toolError(err)
	}
	out := clickOut{ClickID: r.ClickId, CookieWindowDays: r.CookieWindowDays, Test: !in.Live, AffiliateURL: affURL, Warnings: warnings(r.Warnings)}
	if r.PartnerCode != nil {
		out.ShortLink = *r.PartnerCode
	}
	if r.Data != nil && r.Data.ProgramId != nil {
		out.ProgramID = *r.Data.ProgramId
	}
	summary := fmt.Sprintf("%s click recorded on link %s: click_id %s (the cookie would last %d days).", kind(in.Live), out.ShortLink, out.ClickID, out.CookieWindowDays)
	if out.ProgramID != 0 {
		summary += fmt.Sprintf(" Program %d.", out.ProgramID)
	}
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// track_lead

type leadIn struct {
	ClickID     string `json:"click_id,omitempty" jsonschema:"the click id (track_click's answer, or the svc_click_id cookie)"`
	CustomerKey string `json:"customer_key,omitempty" jsonschema:"the brand's stable id for the customer; the same value at sale time"`
	Email       string `json:"email,omitempty" jsonschema:"the customer's email (improves attribution)"`
	Live        bool   `json:"live,omitempty" jsonschema:"record a real lead instead of a test one; only when the user asks"`
}

type attributionOut struct {
	Status    string `json:"status" jsonschema:"attributed, provisional or unattributed"`
	PartnerID int64  `json:"partner_id,omitempty"`
	ClickID   string `json:"click_id,omitempty"`
}

type leadOut struct {
	LeadID      int64          `json:"lead_id,omitempty"`
	CustomerKey string         `json:"customer_key,omitempty"`
	Attribution attributionOut `json:"attribution"`
	Provisional bool           `json:"provisional"`
	Test        bool           `json:"test"`
	Message     string         `json:"message"`
	Warnings    []string       `json:"warnings,omitempty"`
}

func attribution(a client.Attribution) attributionOut {
	out := attributionOut{Status: string(a.Status)}
	if a.PartnerId != nil {
		out.PartnerID = *a.PartnerId
	}
	if a.ClickId != nil {
		out.ClickID = *a.ClickId
	}
	return out
}

func (a attributionOut) String() string {
	if a.PartnerID != 0 {
		return fmt.Sprintf("%s to partner %d", a.Status, a.PartnerID)
	}
	return a.Status
}

func (t *mcpTools) trackLead(ctx context.Context, _ *mcp.CallToolRequest, in leadIn) (*mcp.CallToolResult, leadOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, leadOut{}, toolError(err)
	}
	r, err := call[client.LeadResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.TrackLead(ctx, client.LeadRequest{ClickId: opt(in.ClickID), CustomerKey: opt(in.CustomerKey), Email: opt(in.Email),
			AdditionalData: testData(in.Live)})
	})
	if err != nil {
		return nil, leadOut{}, toolError(err)
	}
	out := leadOut{Attribution: attribution(r.Attribution), Provisional: r.Provisional != nil && bool(*r.Provisional), Test: !in.Live,
		Message: r.Message, Warnings: warnings(r.Warnings)}
	if r.LeadId != nil {
		out.LeadID = *r.LeadId
	}
	if r.CustomerKey != nil {
		out.CustomerKey = *r.CustomerKey
	}
	summary := fmt.Sprintf("%s lead %d recorded for customer %s: %s. %s", kind(in.Live), out.LeadID, out.CustomerKey, out.Attribution, out.Message)
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// track_sale

type saleIn struct {
	AmountCents   int64  `json:"amount_cents" jsonschema:"the amount in the currency's smallest unit (4900 = 49.00 USD), a positive integer"`
	Currency      string `json:"currency,omitempty" jsonschema:"an ISO 4217 code the program lists (USD, EUR and VND unless it lists others); default the program's default currency"`
	CustomerKey   string `json:"customer_key,omitempty" jsonschema:"the customer_key given with the lead"`
	ClickID       string `json:"click_id,omitempty" jsonschema:"the click id, when there is no customer_key"`
	TransactionID string `json:"transaction_id,omitempty" jsonschema:"the idempotency key: the processor's invoice or payment id, unique within the program; optional for a test sale"`
	Live          bool   `json:"live,omitempty" jsonschema:"record a real sale (it pays the partner) instead of a test one; only when the user asks"`
}

type commissionOut struct {
	ID          int64  `json:"id"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Status      string `json:"status"`
}

type saleOut struct {
	Recorded      bool           `json:"recorded" jsonschema:"false when the click was older than the attribution window: nothing recorded"`
	SaleID        int64          `json:"sale_id,omitempty"`
	TransactionID string         `json:"transaction_id,omitempty" jsonschema:"what track_refund takes"`
	AmountCents   int64          `json:"amount_cents,omitempty"`
	Currency      string         `json:"currency,omitempty"`
	Test          bool           `json:"test"`
	Attribution   attributionOut `json:"attribution"`
	Commission    *commissionOut `json:"commission,omitempty" jsonschema:"the partner's commission, absent when the sale pays none"`
	Message       string         `json:"message"`
	Warnings      []string       `json:"warnings,omitempty"`
}

// saleAnswer reads both 200 answers of the sale route (recorded, or the attribution window expired).
type saleAnswer struct {
	Message       string                 `json:"message"`
	SaleID        *int64                 `json:"sale_id"`
	TransactionID string                 `json:"transaction_id"`
	AmountCents   int64                  `json:"amount_cents"`
	Currency      string                 `json:"currency"`
	IsTest        bool                   `json:"is_test"`
	Attribution   *client.Attribution    `json:"attribution"`
	Commission    *client.SaleCommission `json:"commission"`
	Reason        string                 `json:"reason"`
	Warnings      *[]client.Warning      `json:"warnings"`
}

func (t *mcpTools) trackSale(ctx context.Context, _ *mcp.CallToolRequest, in saleIn) (*mcp.CallToolResult, saleOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, saleOut{}, toolError(err)
	}
	r, err := call[saleAnswer](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.TrackSale(ctx, client.SaleRequest{AmountCents: in.AmountCents, Currency: opt(in.Currency), CustomerKey: opt(in.CustomerKey),
			ClickId: opt(in.ClickID), TransactionId: opt(in.TransactionID), AdditionalData: testData(in.Live)})
	})
	if err != nil {
		return nil, saleOut{}, toolError(err)
	}
	out := saleOut{Recorded: r.SaleID != nil, TransactionID: r.TransactionID, AmountCents: r.AmountCents, Currency: r.Currency,
		Test: !in.Live, Attribution: attributionOut{Status: "unattributed"}, Message: r.Message, Warnings: warnings(r.Warnings)}
	if r.Attribution != nil {
		out.Attribution = attribution(*r.Attribution)
	}
	if !out.Recorded {
		summary := "Nothing recorded: " + r.Message
		return result(withWarnings(summary, out.Warnings), out), out, nil
	}
	out.SaleID, out.Test = *r.SaleID, r.IsTest
	if out.Test {
		t.mu.Lock()
		t.testSales[out.TransactionID] = true
		t.mu.Unlock()
	}
	summary := fmt.Sprintf("%s sale %d recorded (transaction_id %s, %d %s in minor units): %s.", kind(!out.Test), out.SaleID,
		out.TransactionID, out.AmountCents, out.Currency, out.Attribution)
	if c := r.Commission; c != nil {
		out.Commission = &commissionOut{ID: c.Id, AmountCents: c.AmountCents, Currency: c.Currency, Status: string(c.Status)}
		summary += fmt.Sprintf(" Commission %d: %d %s, %s.", c.Id, c.AmountCents, c.Currency, c.Status)
	} else {
		summary += " No commission."
	}
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// track_refund

type refundIn struct {
	TransactionID     string `json:"transaction_id" jsonschema:"the transaction_id of the sale (track_sale's answer)"`
	RefundAmountCents int64  `json:"refund_amount_cents,omitempty" jsonschema:"a partial refund, in the currency's smallest unit; default the whole remaining amount"`
	Reason            string `json:"reason,omitempty" jsonschema:"refund (default) or chargeback"`
	RefundReason      string `json:"refund_reason,omitempty" jsonschema:"free text"`
	Live              bool   `json:"live,omitempty" jsonschema:"refund a sale this server did not record as a test sale (a real one: its partner's commission changes); only when the user asks"`
}

type refundOut struct {
	SaleID              int64          `json:"sale_id"`
	TransactionID       string         `json:"transaction_id"`
	Status              string         `json:"status" jsonschema:"reversed (fully refunded), refunded (partially), no_commission or skipped (already fully refunded)"`
	RefundedAmountCents int64          `json:"refunded_amount_cents" jsonschema:"total refunded so far"`
	Reason              string         `json:"reason"`
	Commission          *commissionOut `json:"commission,omitempty"`
	Message             string         `json:"message"`
	Warnings            []string       `json:"warnings,omitempty"`
}

func (t *mcpTools) trackRefund(ctx context.Context, _ *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, refundOut, error) {
	t.mu.Lock()
	test := t.testSales[in.TransactionID]
	t.mu.Unlock()
	if !test && !in.Live {
		return nil, refundOut{}, toolError(&userError{
			Message: fmt.Sprintf("%q is not a test sale this server recorded, and refunding a real sale changes a partner's commission: nothing was sent", in.TransactionID),
			Next:    "refund a test sale recorded with track_sale, or pass live: true if the user asked to refund that sale."})
	}
	to, err := t.key()
	if err != nil {
		return nil, refundOut{}, toolError(err)
	}
	req := client.RefundRequest{TransactionId: in.TransactionID, RefundReason: opt(in.RefundReason)}
	if in.RefundAmountCents != 0 {
		req.RefundAmountCents = &in.RefundAmountCents
	}
	if in.Reason != "" {
		reason := client.RefundRequestReason(in.Reason)
		req.Reason = &reason
	}
	r, err := call[client.RefundResponse](t.a, to, func(api *client.Client) (*http.Response, error) { return api.TrackRefund(ctx, req) })
	if err != nil {
		return nil, refundOut{}, toolError(err)
	}
	out := refundOut{SaleID: r.SaleId, TransactionID: r.TransactionId, Status: string(r.Status), RefundedAmountCents: r.RefundedAmountCents,
		Reason: string(r.Reason), Message: r.Message, Warnings: warnings(r.Warnings)}
	summary := fmt.Sprintf("Refund of sale %d (transaction_id %s): %s, %d refunded in all. %s", out.SaleID, out.TransactionID, out.Status,
		out.RefundedAmountCents, out.Message)
	if c := r.Commission; c != nil {
		out.Commission = &commissionOut{ID: c.Id, AmountCents: c.AmountCents, Currency: c.Currency, Status: string(c.Status)}
		summary += fmt.Sprintf(" Commission %d is %s (%d of %d %s reversed).", c.Id, c.Status, c.ReversedAmountCents, c.AmountCents, c.Currency)
	}
	return result(withWarnings(summary, out.Warnings), out), out, nil
}
