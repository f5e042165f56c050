// Package portal is the HTTP area of the partner portal: its JSON routes under /api/v1/partner (the
// signed-in person's programs, links, stats, commissions, balances, payouts and payout details), its
// pages (the portal, its sign-in and sign-out, invitations, open programs' pages) and their assets.
// Every route reads as the person the middleware authenticated, through package portal's scoping.
package portal

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	openapi_types "github.com/oapi-codegen/runtime/types"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/ledger"
	domain "github.com/reftrack/reftrack/pkg/portal"
	"github.com/reftrack/reftrack/pkg/portalpage"
)

// Portal implements the partner portal's operations of the strict server interface.
type Portal struct {
	DB    *sqlx.DB
	Log   *slog.Logger
	Now   func() time.Time
	Login *identity.Login
	// Details seals and opens partners' payout details.
	Details *domain.Details
	// Assets are the portal page's files (portal.js, portal.css).
	Assets portalpage.Assets
	// SecureCookies marks the portal's cookies Secure (the server is reached over https).
	SecureCookies bool
}

// open is the signed-in person's program id, for reading its data.
func (h *Portal) open(ctx context.Context, programID int64) (domain.Program, error) {
	p, err := auth.Person(ctx)
	if err != nil {
		return domain.Program{}, err
	}
	return domain.Open(ctx, h.DB, p, programID)
}

func wireProgram(p domain.Program) gen.PortalProgram {
	return gen.PortalProgram{Id: p.ID, Name: p.Name, Domain: p.Domain, PartnerId: p.PartnerID, Status: gen.PartnerStatus(p.Status),
		StatusReason: p.StatusReason, PartnerLinkCodes: p.LinkCodes, HoldDays: p.HoldDays,
		CommissionType: gen.CommissionType(p.CommissionType), CommissionRate: p.CommissionRate, Terms: p.Describe()}
}

// PartnerMe answers the signed-in person and their programs.
func (h *Portal) PartnerMe(ctx context.Context, _ gen.PartnerMeRequestObject) (gen.PartnerMeResponseObject, error) {
	p, err := auth.Person(ctx)
	if err != nil {
		return nil, err
	}
	list, err := domain.Programs(ctx, h.DB, p)
	if err != nil {
		return nil, err
	}
	out := gen.PortalMe{Email: p.Email, Name: p.Name, Programs: make([]gen.PortalProgram, len(list))}
	for i, pr := range list {
		out.Programs[i] = wireProgram(pr)
	}
	return gen.PartnerMe200JSONResponse{Body: gen.PortalMeEnvelope{Data: out}}, nil
}

// PartnerListLinks answers the partner's links in the program.
func (h *Portal) PartnerListLinks(ctx context.Context, req gen.PartnerListLinksRequestObject) (gen.PartnerListLinksResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	list, err := domain.Links(ctx, h.DB, pr)
	if err != nil {
		return nil, err
	}
	return gen.PartnerListLinks200JSONResponse{Body: gen.LinkListEnvelope{Data: wire.Links(list)}}, nil
}

// PartnerCreateLink makes a link with the partner's own code.
func (h *Portal) PartnerCreateLink(ctx context.Context, req gen.PartnerCreateLinkRequestObject) (gen.PartnerCreateLinkResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	l, err := domain.CreateLink(ctx, h.DB, pr, req.Body.Code)
	if err != nil {
		return nil, err
	}
	return gen.PartnerCreateLink201JSONResponse{Body: gen.LinkEnvelope{Data: wire.Link(l)}}, nil
}

// PartnerStats answers the partner's daily stats.
func (h *Portal) PartnerStats(ctx context.Context, req gen.PartnerStatsRequestObject) (gen.PartnerStatsResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	days := 30
	if req.Params.Days != nil {
		days = int(*req.Params.Days)
	}
	list, err := domain.Stats(ctx, h.DB, pr, days, h.Now())
	if err != nil {
		return nil, err
	}
	out := make([]gen.PortalDay, len(list))
	for i, d := range list {
		out[i] = gen.PortalDay{Day: openapi_types.Date{Time: d.Day}, Clicks: d.Clicks, Leads: d.Leads, Sales: d.Sales, Commissions: d.Commissions}
	}
	return gen.PartnerStats200JSONResponse{Body: gen.PortalStatsEnvelope{Data: out}}, nil
}

// PartnerListCommissions answers a page of the partner's commissions, customers masked.
func (h *Portal) PartnerListCommissions(ctx context.Context, req gen.PartnerListCommissionsRequestObject) (gen.PartnerListCommissionsResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	status := ""
	if req.Params.Status != nil {
		status = string(*req.Params.Status)
	}
	page, err := domain.Commissions(ctx, h.DB, pr, status, wire.Deref(req.Params.Cursor), wire.Deref(req.Params.Limit), h.Now())
	if err != nil {
		return nil, err
	}
	out := gen.PortalCommissionListEnvelope{Data: make([]gen.PortalCommission, len(page.Commissions)), Meta: wire.ListMeta(page.NextCursor)}
	for i, c := range page.Commissions {
		w := wire.Commission(c.Commission)
		out.Data[i] = gen.PortalCommission{Id: w.Id, ProgramId: w.ProgramId, PartnerId: w.PartnerId, SaleId: w.SaleId,
			TransactionId: w.TransactionId, AmountCents: w.AmountCents, ReversedAmountCents: w.ReversedAmountCents,
			PayableCents: w.PayableCents, Currency: w.Currency, Status: w.Status, AvailableOn: w.AvailableOn, ApprovedAt: w.ApprovedAt,
			RejectedReason: w.RejectedReason, PayoutId: w.PayoutId, PaidAt: w.PaidAt, ClawbackCents: w.ClawbackCents, IsTest: w.IsTest,
			CreatedAt: w.CreatedAt, Customer: c.Customer}
	}
	return gen.PartnerListCommissions200JSONResponse{Body: out}, nil
}

// PartnerBalances answers the partner's balances.
func (h *Portal) PartnerBalances(ctx context.Context, req gen.PartnerBalancesRequestObject) (gen.PartnerBalancesResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	bs, err := ledger.PartnerBalances(ctx, h.DB, pr.ID, pr.PartnerID, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.PartnerBalances200JSONResponse{Body: gen.BalanceListEnvelope{Data: wire.Balances(bs)}}, nil
}

// PartnerListPayouts answers a page of the partner's payouts.
func (h *Portal) PartnerListPayouts(ctx context.Context, req gen.PartnerListPayoutsRequestObject) (gen.PartnerListPayoutsResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	page, err := ledger.PartnerPayouts(ctx, h.DB, pr.ID, pr.PartnerID, wire.Deref(req.Params.Cursor), wire.Deref(req.Params.Limit))
	if err != nil {
		return nil, err
	}
	return gen.PartnerListPayouts200JSONResponse{Body: gen.PayoutListEnvelope{Data: wire.Payouts(page.Payouts),
		Meta: wire.ListMeta(page.NextCursor)}}, nil
}

// PartnerExportPayouts answers the partner's payouts as CSV.
func (h *Portal) PartnerExportPayouts(ctx context.Context, req gen.PartnerExportPayoutsRequestObject) (gen.PartnerExportPayoutsResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	b, err := ledger.PartnerPayoutsCSV(ctx, h.DB, pr.ID, pr.PartnerID)
	if err != nil {
		return nil, err
	}
	out := gen.PartnerExportPayouts200TextcsvCharsetUtf8Response{Body: bytes.NewReader(b), ContentLength: int64(len(b))}
	out.Headers.ContentDisposition = fmt.Sprintf("attachment; filename=payouts-%d.csv", pr.ID)
	return out, nil
}

func wireDetails(d *domain.PayoutDetails) *gen.PayoutDetails {
	if d == nil {
		return nil
	}
	out := &gen.PayoutDetails{Method: gen.PayoutDetailsMethod(d.Method)}
	if d.PayPalEmail != "" {
		out.PaypalEmail = &d.PayPalEmail
	}
	if d.BankDetails != "" {
		out.BankDetails = &d.BankDetails
	}
	if d.UpdatedAt != nil {
		out.UpdatedAt = *d.UpdatedAt
	}
	return out
}

// PartnerGetPayoutDetails answers the partner's payout details (null until given).
func (h *Portal) PartnerGetPayoutDetails(ctx context.Context, req gen.PartnerGetPayoutDetailsRequestObject) (gen.PartnerGetPayoutDetailsResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	d, err := h.Details.Get(ctx, h.DB, pr)
	if err != nil {
		return nil, err
	}
	return gen.PartnerGetPayoutDetails200JSONResponse{Body: gen.PayoutDetailsEnvelope{Data: wireDetails(d)}}, nil
}

// PartnerSetPayoutDetails stores the partner's payout details, sealed.
func (h *Portal) PartnerSetPayoutDetails(ctx context.Context, req gen.PartnerSetPayoutDetailsRequestObject) (gen.PartnerSetPayoutDetailsResponseObject, error) {
	pr, err := h.open(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	in := domain.PayoutDetails{Method: req.Body.Method, PayPalEmail: wire.Deref(req.Body.PaypalEmail), BankDetails: wire.Deref(req.Body.BankDetails)}
	d, err := h.Details.Set(ctx, h.DB, pr, in, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.PartnerSetPayoutDetails200JSONResponse{Body: gen.PayoutDetailsEnvelope{Data: wireDetails(&d)}}, nil
}
