package sales

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// generatedIDAttempts is how many generated transaction ids a test sale tries before its duplicate is
// answered: the first and three more.
const generatedIDAttempts = 4

// TestTransactionID is the transaction id a test sale sent without one is recorded under.
func TestTransactionID(now time.Time) string {
	return "test_txn_" + strconv.FormatInt(now.UnixNano(), 10)
}

// Tracked is a sale recorded by Track and the transaction id it was recorded under.
type Tracked struct {
	Result
	TransactionID string
}

// Track records a sale from the sale route in the next batch. A test sale sent without a transaction_id
// (in.TransactionID "") is recorded under a generated one (TestTransactionID of now()); a generated id
// that is already recorded was never the caller's, so another is drawn, at most three times. A
// transaction id the caller sent is recorded as it is: its duplicate is the caller's to see.
func (r *Recorder) Track(ctx context.Context, in Input, now func() time.Time) (Tracked, error) {
	generated := in.Test && in.TransactionID == ""
	for attempt := 1; ; attempt++ {
		if generated {
			in.TransactionID = TestTransactionID(now())
		}
		res, err := r.Record(ctx, in)
		var dup *DuplicateError
		if generated && errors.As(err, &dup) && attempt < generatedIDAttempts {
			continue
		}
		return Tracked{Result: res, TransactionID: in.TransactionID}, err
	}
}
