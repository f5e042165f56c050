package readiness

import (
	"context"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Status is what `reftrack status` shows of a program.
type Status struct {
	Program programs.Program
	// DNS is the program's domain verification, checked first when due (programs.CheckDNS).
	DNS programs.DNSStatus
	// Activity is over the 24 hours before now.
	Activity Activity
	// Stripe is the program's Stripe connection, nil when it has none.
	Stripe *payments.Connection
}

// ReadStatus reads the program's Status at now, checking its domain in DNS when a check is due.
func ReadStatus(ctx context.Context, db *sqlx.DB, resolver programs.TXTResolver, programID int64, now time.Time) (Status, error) {
	var st Status
	var err error
	if st.Program, err = programs.Get(ctx, db, programID); err != nil {
		return Status{}, err
	}
	if st.DNS, err = programs.CheckDNS(ctx, db, resolver, programID, now); err != nil {
		return Status{}, err
	}
	if st.Activity, err = RecentActivity(ctx, db, programID, now.Add(-24*time.Hour)); err != nil {
		return Status{}, err
	}
	c, err := payments.Get(ctx, db, programID, payments.ProviderStripe)
	switch {
	case err == nil:
		st.Stripe = &c
	case !errors.Is(err, payments.ErrNotConnected):
		return Status{}, err
	}
	return st, nil
}
