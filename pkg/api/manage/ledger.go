package manage

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
)

// The ledger's routes (docs/rules.md#the-ledger-and-payouts): commissions, balances and payouts. Each
// handler reads the request into pkg/ledger's input and makes one call; pkg/ledger checks access (the
// member's role in the program's workspace), ranges and states, and writes the audit log.

// signedIn is the signed-in account.
func (h *Management) signedIn(ctx context.Context) (int64, error) {
	a, err := auth.SignedIn(ctx)
	return a.ID, err
}

// ledgerRequest is who acts and when (the server's clock), with the request's Idempotency-Key when it
// sent one: a key names the operation, its path parameters and its body exactly as received.
func (h *Management) ledgerRequest(ctx context.Context, key *string, operation string, params ...int64) (ledger.Request, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return ledger.Request{}, err
	}
	r := ledger.Request{AccountID: a.ID, Email: a.Email, Now: h.Now()}
	if key == nil {
		return r, nil
	}
	parts := [][]byte{[]byte(operation)}
	for _, p := range params {
		parts = append(parts, strconv.AppendInt(nil, p, 10))
	}
	parts = append(parts, request.From(ctx).RawBody)
	r.Key, err = idempotency.New(a.ID, *key, parts...)
	return r, err
}

// ListCommissions lists a program's commissions, newest first, a page at a time.
func (h *Management) ListCommissions(ctx context.Context, req gen.ListCommissionsRequestObject) (gen.ListCommissionsResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	p := req.Params
	f := ledger.Filter{PartnerID: wire.Deref(p.PartnerId), CreatedFrom: p.CreatedFrom, CreatedTo: p.CreatedTo,
		Cursor: wire.Deref(p.Cursor), Limit: wire.Deref(p.Limit)}
	if p.Status != nil {
		f.Status = string(*p.Status)
	}
	if p.Hold != nil {
		f.Hold = string(*p.Hold)
	}
	page, err := ledger.ListCommissions(ctx, h.DB, accountID, req.ProgramId, f, h.Now())
	if err != nil {
		return nil, err
	}
	out := gen.CommissionListEnvelope{Data: wire.Commissions(page.Commissions), Meta: wire.ListMeta(page.NextCursor)}
	return gen.ListCommissions200JSONResponse{Body: out}, nil
}

// GetCommission shows one commission.
func (h *Management) GetCommission(ctx context.Context, req gen.GetCommissionRequestObject) (gen.GetCommissionResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	c, err := ledger.GetCommission(ctx, h.DB, accountID, req.CommissionId, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.GetCommission200JSONResponse{Body: gen.CommissionEnvelope{Data: wire.Commission(c)}}, nil
}

// ApproveCommission approves one commission (owner, admin, billing).
func (h *Management) ApproveCommission(ctx context.Context, req gen.ApproveCommissionRequestObject) (gen.ApproveCommissionResponseObject, error) {
	r, err := h.ledgerRequest(ctx, req.Params.IdempotencyKey, "approveCommission", req.CommissionId)
	if err != nil {
		return nil, err
	}
	release := req.Body != nil && wire.Deref(req.Body.ReleaseHold)
	c, err := ledger.Approve(ctx, h.DB, r, req.CommissionId, release)
	if err != nil {
		return nil, err
	}
	return gen.ApproveCommission200JSONResponse{Body: gen.CommissionEnvelope{Data: wire.Commission(c)}}, nil
}

// ApproveCommissions approves several commissions of a program, all or none (owner, admin, billing).
func (h *Management) ApproveCommissions(ctx context.Context, req gen.ApproveCommissionsRequestObject) (gen.ApproveCommissionsResponseObject, error) {
	r, err := h.ledgerRequest(ctx, req.Params.IdempotencyKey, "approveCommissions", req.ProgramId)
	if err != nil {
		return nil, err
	}
	cs, err := ledger.ApproveMany(ctx, h.DB, r, req.ProgramId, req.Body.Ids, wire.Deref(req.Body.ReleaseHold))
	if err != nil {
		return nil, err
	}
	return gen.ApproveCommissions200JSONResponse{Body: gen.CommissionBatchEnvelope{Data: wire.Commissions(cs)}}, nil
}

// RejectCommission rejects a commission with a reason (owner, admin, billing).
func (h *Management) RejectCommission(ctx context.Context, req gen.RejectCommissionRequestObject) (gen.RejectCommissionResponseObject, error) {
	r, err := h.ledgerRequest(ctx, req.Params.IdempotencyKey, "rejectCommission", req.CommissionId)
	if err != nil {
		return nil, err
	}
	c, err := ledger.Reject(ctx, h.DB, r, req.CommissionId, req.Body.Reason)
	if err != nil {
		return nil, err
	}
	return gen.RejectCommission200JSONResponse{Body: gen.CommissionEnvelope{Data: wire.Commission(c)}}, nil
}

// ListBalances answers the program's balances per partner and currency.
func (h *Management) ListBalances(ctx context.Context, req gen.ListBalancesRequestObject) (gen.ListBalancesResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	bs, err := ledger.Balances(ctx, h.DB, accountID, req.ProgramId, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.ListBalances200JSONResponse{Body: gen.BalanceListEnvelope{Data: wire.Balances(bs)}}, nil
}

// CreatePayouts pays out the program's approved commissions (owner, admin, billing).
func (h *Management) CreatePayouts(ctx context.Context, req gen.CreatePayoutsRequestObject) (gen.CreatePayoutsResponseObject, error) {
	r, err := h.ledgerRequest(ctx, req.Params.IdempotencyKey, "createPayouts", req.ProgramId)
	if err != nil {
		return nil, err
	}
	currency := ""
	if req.Body != nil && req.Body.Currency != nil {
		currency = string(*req.Body.Currency)
	}
	run, err := ledger.CreatePayoutRun(ctx, h.DB, r, req.ProgramId, currency)
	if err != nil {
		return nil, err
	}
	return gen.CreatePayouts201JSONResponse{Body: wire.PayoutRun(run)}, nil
}

// ListPayouts lists a program's payouts, newest first, a page at a time.
func (h *Management) ListPayouts(ctx context.Context, req gen.ListPayoutsRequestObject) (gen.ListPayoutsResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	status := ""
	if req.Params.Status != nil {
		status = string(*req.Params.Status)
	}
	page, err := ledger.ListPayouts(ctx, h.DB, accountID, req.ProgramId, wire.Deref(req.Params.PartnerId), status, wire.Deref(req.Params.Cursor), wire.Deref(req.Params.Limit))
	if err != nil {
		return nil, err
	}
	out := gen.PayoutListEnvelope{Data: wire.Payouts(page.Payouts), Meta: wire.ListMeta(page.NextCursor)}
	return gen.ListPayouts200JSONResponse{Body: out}, nil
}

// GetPayout shows one payout.
func (h *Management) GetPayout(ctx context.Context, req gen.GetPayoutRequestObject) (gen.GetPayoutResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	p, err := ledger.GetPayout(ctx, h.DB, accountID, req.PayoutId)
	if err != nil {
		return nil, err
	}
	return gen.GetPayout200JSONResponse{Body: gen.PayoutEnvelope{Data: wire.Payout(p)}}, nil
}

// MarkPayoutPaid marks a payout paid under its external reference (owner, admin, billing).
func (h *Management) MarkPayoutPaid(ctx context.Context, req gen.MarkPayoutPaidRequestObject) (gen.MarkPayoutPaidResponseObject, error) {
	r, err := h.ledgerRequest(ctx, req.Params.IdempotencyKey, "markPayoutPaid", req.PayoutId)
	if err != nil {
		return nil, err
	}
	p, err := ledger.MarkPaid(ctx, h.DB, r, req.PayoutId, req.Body.ExternalReference)
	if err != nil {
		return nil, err
	}
	return gen.MarkPayoutPaid200JSONResponse{Body: gen.PayoutEnvelope{Data: wire.Payout(p)}}, nil
}

// MarkPayoutFailed marks a payout failed with a reason (owner, admin, billing).
func (h *Management) MarkPayoutFailed(ctx context.Context, req gen.MarkPayoutFailedRequestObject) (gen.MarkPayoutFailedResponseObject, error) {
	r, err := h.ledgerRequest(ctx, req.Params.IdempotencyKey, "markPayoutFailed", req.PayoutId)
	if err != nil {
		return nil, err
	}
	p, err := ledger.MarkFailed(ctx, h.DB, r, req.PayoutId, req.Body.Reason)
	if err != nil {
		return nil, err
	}
	return gen.MarkPayoutFailed200JSONResponse{Body: gen.PayoutEnvelope{Data: wire.Payout(p)}}, nil
}

// ExportPayouts answers the program's payouts of a status as a CSV file (default or PayPal's).
func (h *Management) ExportPayouts(ctx context.Context, req gen.ExportPayoutsRequestObject) (gen.ExportPayoutsResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	status, format := ledger.PayoutProcessing, ledger.FormatDefault
	if req.Params.Status != nil {
		status = string(*req.Params.Status)
	}
	if req.Params.Format != nil {
		format = string(*req.Params.Format)
	}
	b, err := ledger.ExportCSV(ctx, h.DB, accountID, req.ProgramId, status, format, func(ctx context.Context, ids []int64) (map[int64]string, error) {
		return h.Details.PayPalEmails(ctx, h.DB, ids)
	})
	if err != nil {
		return nil, err
	}
	out := gen.ExportPayouts200TextcsvCharsetUtf8Response{Body: bytes.NewReader(b), ContentLength: int64(len(b))}
	out.Headers.ContentDisposition = fmt.Sprintf("attachment; filename=payouts-%d-%s.csv", req.ProgramId, status)
	return out, nil
}
