package ledger

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// The partner portal's reads: one partner's commissions, balances and payouts in one program. The caller
// (pkg/portal) has checked that the signed-in person is that partner.

// PartnerCommissions is a page of the partner's commissions in the program, newest first (ListCommissions'
// filter and cursor; f.PartnerID is set to partnerID).
func PartnerCommissions(ctx context.Context, db *sqlx.DB, programID, partnerID int64, f Filter, now time.Time) (CommissionPage, error) {
	after, limit, err := f.checked()
	if err != nil {
		return CommissionPage{}, err
	}
	f.PartnerID = partnerID
	return listCommissions(ctx, db, programID, f, after, limit, now)
}

// PartnerBalances are the partner's balances in the program, one per currency.
func PartnerBalances(ctx context.Context, db *sqlx.DB, programID, partnerID int64, now time.Time) ([]Balance, error) {
	return balances(ctx, db, programID, partnerID, now)
}

// PartnerPayouts is a page of the partner's payouts in the program, newest first.
func PartnerPayouts(ctx context.Context, db *sqlx.DB, programID, partnerID int64, cur string, limit int) (PayoutPage, error) {
	limit, err := pageLimit(limit)
	if err != nil {
		return PayoutPage{}, err
	}
	after, err := decodeCursor(cur)
	if err != nil {
		return PayoutPage{}, err
	}
	return listPayouts(ctx, db, programID, partnerID, "", after, limit)
}

// partnerCSVColumns are the columns of a partner's own payouts file.
var partnerCSVColumns = []string{"payout_id", "amount", "currency", "commission_count", "status", "external_reference",
	"created_at", "paid_at"}

// PartnerPayoutsCSV is every payout of the partner in the program, oldest first, as CSV (RFC 4180, a
// header row, amounts in major units, cells that a spreadsheet would read as formulas quoted).
func PartnerPayoutsCSV(ctx context.Context, db *sqlx.DB, programID, partnerID int64) ([]byte, error) {
	var payouts []Payout
	if err := sqlx.SelectContext(ctx, db, &payouts, `SELECT `+payoutColumns+` WHERE o.program_id = $1 AND o.partner_id = $2
		ORDER BY o.id`, programID, partnerID); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	if err := w.Write(partnerCSVColumns); err != nil {
		return nil, err
	}
	for _, o := range payouts {
		paid := ""
		if o.PaidAt != nil {
			paid = o.PaidAt.UTC().Format(time.RFC3339)
		}
		ref := ""
		if o.ExternalReference != nil {
			ref = *o.ExternalReference
		}
		row := []string{strconv.FormatInt(o.ID, 10), FormatAmount(o.AmountCents, o.Currency), o.Currency,
			strconv.Itoa(o.CommissionCount), o.Status, ref, o.CreatedAt.UTC().Format(time.RFC3339), paid}
		for i := range row {
			row[i] = cell(row[i])
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
