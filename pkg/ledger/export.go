package ledger

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
)

// Export formats.
const (
	FormatDefault = ""
	FormatPayPal  = "paypal"
)

// csvColumns is the default export's header.
var csvColumns = []string{"payout_id", "partner_id", "partner_name", "partner_email", "payout_email", "amount", "currency",
	"commission_count", "created_at"}

// ExportCSV writes the program's payouts of status (processing when "") as CSV (RFC 4180): by default a
// header row and csvColumns; with FormatPayPal, PayPal Payouts' bulk file (recipient email, amount,
// currency, the payout id as reference, a note) without a header. Amounts are in major units with the
// currency's exponent. A cell that a spreadsheet would read as a formula (starting with =, +, - or @) is
// prefixed with a quote.
//
// The payout email of a partner is the PayPal address they gave as payout details (emails answers them,
// by partner id), else their email; emails nil reads every partner's email.
func ExportCSV(ctx context.Context, db *sqlx.DB, accountID, programID int64, status, format string, emails PayoutEmails) ([]byte, error) {
	if status == "" {
		status = PayoutProcessing
	}
	if err := CheckPayoutStatus(status); err != nil {
		return nil, err
	}
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	p, err := access(ctx, db, accountID, programID, accounts.ActionCommissionsRead)
	if err != nil {
		return nil, err
	}
	var payouts []Payout
	if err := sqlx.SelectContext(ctx, db, &payouts, `SELECT `+payoutColumns+` WHERE o.program_id = $1 AND o.status = $2
		ORDER BY o.id`, programID, status); err != nil {
		return nil, err
	}
	payTo := map[int64]string{}
	if emails != nil && len(payouts) > 0 {
		ids := make([]int64, len(payouts))
		for i, o := range payouts {
			ids[i] = o.PartnerID
		}
		if payTo, err = emails(ctx, ids); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	if format == FormatDefault {
		if err := w.Write(csvColumns); err != nil {
			return nil, err
		}
	}
	for _, o := range payouts {
		id, amount := strconv.FormatInt(o.ID, 10), FormatAmount(o.AmountCents, o.Currency)
		recipient := o.PartnerEmail
		if e := payTo[o.PartnerID]; e != "" {
			recipient = e
		}
		var row []string
		if format == FormatPayPal {
			row = []string{recipient, amount, o.Currency, "payout_" + id,
				"Commission payout " + id + " from " + p.Name}
		} else {
			row = []string{id, strconv.FormatInt(o.PartnerID, 10), o.PartnerName, o.PartnerEmail, recipient, amount,
				o.Currency, strconv.Itoa(o.CommissionCount), o.CreatedAt.UTC().Format(time.RFC3339)}
		}
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

// PayoutEmails answers the PayPal addresses partners gave as their payout details, by partner id (those
// who gave none are left out).
type PayoutEmails func(ctx context.Context, partnerIDs []int64) (map[int64]string, error)

// cell is s safe to open in a spreadsheet: one starting with =, +, - or @ would be read as a formula.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}
