// Package enrollment moves a partner through a program's enrollment (approve, reject, ban) and invites
// partners by email: it owns the invitations and orchestrates the packages whose tables a transition
// touches (pkg/programs' relationships and links, pkg/ledger's commissions, pkg/mail's outbox) in one
// transaction each.
package enrollment

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Audit actions of this package.
const (
	ActionApprove = "partner.approve"
	ActionReject  = "partner.reject"
	ActionBan     = "partner.ban"
	ActionInvite  = "partner.invite"
	ActionResend  = "invitation.resend"
	ActionCancel  = "invitation.cancel"
)

// MaxReason is the longest reason of a rejection or a ban, in characters.
const MaxReason = 500

// Errors of this package.
var (
	// ErrPartnerNotFound: the partner is not in the program.
	ErrPartnerNotFound = errors.New("partner not found in this program")
	// ErrInvitationNotFound: the program has no invitation with that id.
	ErrInvitationNotFound = errors.New("invitation not found")
)

// ConflictError refuses a transition the enrollment's (or the invitation's) status does not allow (409).
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

func conflict(format string, args ...any) error {
	return &ConflictError{Message: fmt.Sprintf(format, args...)}
}

// InvalidError refuses an input out of its range (400); Message is the answer's.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }

func invalid(format string, args ...any) error {
	return &InvalidError{Message: fmt.Sprintf(format, args...)}
}

// Request is who acts, and when.
type Request struct {
	AccountID int64
	Email     string
	Now       time.Time
}

func (r Request) actor() audit.Actor { return audit.Account(r.AccountID, r.Email) }

// CheckReason refuses a reason that is blank or longer than MaxReason characters.
func CheckReason(reason *string) error {
	if reason != nil && (strings.TrimSpace(*reason) == "" || utf8.RuneCountInString(*reason) > MaxReason) {
		return invalid("reason must be 1 to %d characters", MaxReason)
	}
	return nil
}

// inTx runs action in a transaction and commits it, again (at most three times more) when PostgreSQL
// ended it on a deadlock or a serialization failure: two batches of invitations naming the same people
// in different orders, or an invitation canceled while its person is invited again, lock the same rows
// in opposite orders. Nothing of a transaction ended so has been written, so running it again is safe.
func inTx[T any](ctx context.Context, db *sqlx.DB, action func(tx *sqlx.Tx) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		out, err := once(ctx, db, action)
		if err != nil && dbfault.Conflict(err) && attempt < 3 {
			continue
		}
		return out, err
	}
}

func once[T any](ctx context.Context, db *sqlx.DB, action func(tx *sqlx.Tx) (T, error)) (T, error) {
	var zero T
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return zero, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	out, err := action(tx)
	if err != nil {
		return zero, err
	}
	if err := tx.Commit(); err != nil {
		return zero, err
	}
	return out, nil
}

// transition runs change on the partner's locked enrollment in one transaction, writes the audit entry
// it returns, and answers the partner as they stand after it. change returns no entry when the
// enrollment already is where it would take it (nothing is written then).
func transition(ctx context.Context, db *sqlx.DB, r Request, programID, partnerID int64,
	change func(tx *sqlx.Tx, e programs.Enrollment) (entry *audit.Entry, err error)) (programs.Partner, error) {
	return inTx(ctx, db, func(tx *sqlx.Tx) (programs.Partner, error) {
		e, err := programs.LockEnrollment(ctx, tx, programID, partnerID)
		if errors.Is(err, programs.ErrPartnerNotFound) {
			return programs.Partner{}, ErrPartnerNotFound
		}
		if err != nil {
			return programs.Partner{}, err
		}
		entry, err := change(tx, e)
		if err != nil {
			return programs.Partner{}, err
		}
		if entry != nil {
			entry.At, entry.Actor = r.Now, r.actor()
			entry.Target = "partner:" + strconv.FormatInt(partnerID, 10)
			if err := audit.Write(ctx, tx, *entry); err != nil {
				return programs.Partner{}, err
			}
		}
		return programs.PartnerOf(ctx, tx, programID, partnerID)
	})
}

// Approve approves a partner who applied (pending); an approved one is answered unchanged.
func Approve(ctx context.Context, db *sqlx.DB, r Request, programID, partnerID int64) (programs.Partner, error) {
	return transition(ctx, db, r, programID, partnerID, func(tx *sqlx.Tx, e programs.Enrollment) (*audit.Entry, error) {
		switch e.Status {
		case programs.StatusApproved:
			return nil, nil
		case programs.StatusInvited:
			return nil, conflict("Partner %d is invited: the enrollment is approved when they accept the invitation", partnerID)
		case programs.StatusRejected:
			return nil, conflict("Partner %d was rejected", partnerID)
		case programs.StatusBanned:
			return nil, conflict("Partner %d is banned", partnerID)
		}
		if err := programs.SetEnrollment(ctx, tx, e.ID, programs.StatusApproved, nil, r.Now); err != nil {
			return nil, err
		}
		return &audit.Entry{Action: ActionApprove, Detail: map[string]any{"program_id": programID}}, nil
	})
}

// Reject rejects a partner who applied (pending), with an optional reason; a rejected one is answered
// unchanged.
func Reject(ctx context.Context, db *sqlx.DB, r Request, programID, partnerID int64, reason *string) (programs.Partner, error) {
	if err := CheckReason(reason); err != nil {
		return programs.Partner{}, err
	}
	return transition(ctx, db, r, programID, partnerID, func(tx *sqlx.Tx, e programs.Enrollment) (*audit.Entry, error) {
		switch e.Status {
		case programs.StatusRejected:
			return nil, nil
		case programs.StatusPending:
		default:
			return nil, conflict("Partner %d is %s: only an application can be rejected", partnerID, e.Status)
		}
		if err := programs.SetEnrollment(ctx, tx, e.ID, programs.StatusRejected, reason, r.Now); err != nil {
			return nil, err
		}
		return &audit.Entry{Action: ActionReject, Detail: map[string]any{"program_id": programID, "reason": reason}}, nil
	})
}

// Ban bans an approved partner for good: their links in the program go off and their commissions not
// yet in a payout are rejected (ledger.RejectBanned), in the same transaction. A banned one is answered
// unchanged.
func Ban(ctx context.Context, db *sqlx.DB, r Request, programID, partnerID int64, reason *string) (programs.Partner, error) {
	if err := CheckReason(reason); err != nil {
		return programs.Partner{}, err
	}
	return transition(ctx, db, r, programID, partnerID, func(tx *sqlx.Tx, e programs.Enrollment) (*audit.Entry, error) {
		switch e.Status {
		case programs.StatusBanned:
			return nil, nil
		case programs.StatusApproved:
		default:
			return nil, conflict("Partner %d is %s: only an approved partner can be banned", partnerID, e.Status)
		}
		if err := programs.SetEnrollment(ctx, tx, e.ID, programs.StatusBanned, reason, r.Now); err != nil {
			return nil, err
		}
		links, err := programs.DisablePartnerLinks(ctx, tx, programID, partnerID)
		if err != nil {
			return nil, err
		}
		rejected, err := ledger.RejectBanned(ctx, tx, r.actor(), programID, partnerID, r.Now)
		if err != nil {
			return nil, err
		}
		return &audit.Entry{Action: ActionBan, Detail: map[string]any{"program_id": programID, "reason": reason,
			"links_disabled": links, "commissions_rejected": rejected}}, nil
	})
}
