package portal

import (
	"context"
	"encoding/json"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/programs"
)

// PayPalEmails answers the PayPal addresses the partners of ids gave as payout details, by partner id:
// the payouts CSV pays them there (ledger.PayoutEmails). Partners who gave none, or a bank transfer, are
// left out.
func (d *Details) PayPalEmails(ctx context.Context, db sqlx.QueryerContext, ids []int64) (map[int64]string, error) {
	sealed, err := programs.SealedPayoutDetails(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(sealed))
	for id, s := range sealed {
		if s.Method != MethodPayPal {
			continue
		}
		plain, err := d.open(id, s.Sealed)
		if err != nil {
			return nil, err
		}
		var pd PayoutDetails
		if err := json.Unmarshal([]byte(plain), &pd); err != nil {
			return nil, err
		}
		out[id] = pd.PayPalEmail
	}
	return out, nil
}
