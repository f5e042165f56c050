package portal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/seal"
)

// Payout methods a partner may give.
const (
	MethodPayPal       = "paypal"
	MethodBankTransfer = "bank_transfer"
	maxBankDetails     = 1000
	maxPayPalEmail     = 320 // characters, as partners' and invitations' emails
)

// ErrPayoutDetails refuses payout details out of their format.
var ErrPayoutDetails = errors.New("payout details: method must be paypal (with paypal_email) or bank_transfer (with bank_details, 1 to 1000 characters)")

// PayoutDetails is how a partner wants to be paid: a PayPal email, or free text for a bank transfer.
type PayoutDetails struct {
	Method      string     `json:"method"`
	PayPalEmail string     `json:"paypal_email,omitempty"`
	BankDetails string     `json:"bank_details,omitempty"`
	UpdatedAt   *time.Time `json:"-"`
}

// Check refuses details out of their format, and trims what may be trimmed.
func (d PayoutDetails) Check() (PayoutDetails, error) {
	switch d.Method {
	case MethodPayPal:
		// A bare address of a domain with a dot (PayPal takes no other), at most maxPayPalEmail long.
		e := strings.TrimSpace(d.PayPalEmail)
		a, err := mail.ParseAddress(e)
		if err != nil || a.Name != "" || a.Address != e || len(e) > maxPayPalEmail || !strings.Contains(e[strings.LastIndexByte(e, '@')+1:], ".") {
			return PayoutDetails{}, ErrPayoutDetails
		}
		return PayoutDetails{Method: d.Method, PayPalEmail: a.Address}, nil
	case MethodBankTransfer:
		b := strings.TrimSpace(d.BankDetails)
		if b == "" || utf8.RuneCountInString(b) > maxBankDetails {
			return PayoutDetails{}, ErrPayoutDetails
		}
		return PayoutDetails{Method: d.Method, BankDetails: b}, nil
	}
	return PayoutDetails{}, ErrPayoutDetails
}

// Details seals and opens payout details with the key derived for them.
type Details struct {
	Sealer *seal.Sealer
}

// NewDetails derives the payout details' key from the server's secrets key (32 bytes, as the webhook
// secrets are sealed under: a derived key is 32 bytes whatever it is derived from, so the length is
// checked here).
func NewDetails(key []byte) (*Details, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secrets key: want 32 bytes, got %d", len(key))
	}
	s, err := seal.New(seal.Derive(key, "reftrack partner payout details v1"))
	if err != nil {
		return nil, err
	}
	return &Details{Sealer: s}, nil
}

// owner binds a partner's sealed details to their record: details copied onto another partner's row do
// not open there (they decide where a partner's payouts go).
func owner(partnerID int64) []byte { return []byte("partner:" + strconv.FormatInt(partnerID, 10)) }

// open opens the partner's sealed details.
func (d *Details) open(partnerID int64, sealed []byte) (string, error) {
	return d.Sealer.OpenFor(sealed, owner(partnerID))
}

// Get answers the partner's payout details in the program's workspace (nil when none were given).
func (d *Details) Get(ctx context.Context, db sqlx.QueryerContext, pr Program) (*PayoutDetails, error) {
	method, sealed, at, err := programs.PayoutDetails(ctx, db, pr.PartnerID)
	if err != nil || method == "" {
		return nil, err
	}
	plain, err := d.open(pr.PartnerID, sealed)
	if err != nil {
		return nil, err
	}
	var out PayoutDetails
	if err := json.Unmarshal([]byte(plain), &out); err != nil {
		return nil, err
	}
	out.UpdatedAt = at
	return &out, nil
}

// Set stores the partner's payout details, sealed, and answers them as stored.
func (d *Details) Set(ctx context.Context, db *sqlx.DB, pr Program, in PayoutDetails, now time.Time) (PayoutDetails, error) {
	in, err := in.Check()
	if err != nil {
		return PayoutDetails{}, err
	}
	b, err := json.Marshal(in)
	if err != nil {
		return PayoutDetails{}, err
	}
	sealed, err := d.Sealer.SealFor(string(b), owner(pr.PartnerID))
	if err != nil {
		return PayoutDetails{}, err
	}
	// PostgreSQL keeps microseconds: the answer is the time as stored, which a later Get reads.
	now = now.Truncate(time.Microsecond)
	if err := programs.SetPayoutDetails(ctx, db, pr.PartnerID, in.Method, sealed, now); err != nil {
		return PayoutDetails{}, err
	}
	in.UpdatedAt = &now
	return in, nil
}
