package enrollment

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/secret"
)

// The partner's side: accepting an invitation, applying to an open program.

// Audit actions of the partner's side.
const (
	ActionAccept = "invitation.accept"
	ActionApply  = "partner.apply"
)

// Refusals of an invitation's link.
var (
	// ErrInvitationUnknown: no invitation has the link's token (a resent one's old link, a canceled one).
	ErrInvitationUnknown = errors.New("this invitation link is not valid")
	// ErrInvitationExpired: the link is past its 30 days.
	ErrInvitationExpired = errors.New("this invitation link has expired")
)

// OtherEmailError refuses an invitation accepted by a person signed in with another email than the one
// it was sent to.
type OtherEmailError struct{ Invited string }

func (e *OtherEmailError) Error() string {
	return "This invitation was sent to " + e.Invited + ": sign in with that address to accept it"
}

// Invited is what an invitation's page shows before it is accepted.
type Invited struct {
	InvitationID   int64  `db:"id"`
	ProgramID      int64  `db:"program_id"`
	Program        string `db:"program_name"`
	Domain         string `db:"domain"`
	Email          string `db:"email"`
	Message        *string
	Status         string `db:"status"`
	ExpiresAt      time.Time
	programs.Terms // the program's, told on the invitation's page
}

// Peek reads the invitation of token (ErrInvitationUnknown, ErrInvitationExpired), accepted or not.
func Peek(ctx context.Context, db sqlx.QueryerContext, token string, now time.Time) (Invited, error) {
	var row struct {
		Invited
		Message   *string   `db:"message"`
		ExpiresAt time.Time `db:"expires_at"`
	}
	err := sqlx.GetContext(ctx, db, &row, `SELECT i.id, i.program_id, p.name AS program_name, p.domain, i.email, i.message,
		i.status, i.expires_at, `+programs.TermsColumns("p")+` FROM partner_invitations i JOIN programs p ON p.id = i.program_id
		WHERE i.token_hash = $1 AND i.status <> 'canceled'`, secret.Hash(token))
	if errors.Is(err, sql.ErrNoRows) || token == "" {
		return Invited{}, ErrInvitationUnknown
	}
	if err != nil {
		return Invited{}, err
	}
	out := row.Invited
	out.Message, out.ExpiresAt = row.Message, row.ExpiresAt
	if out.Status == InvitationSent && !now.Before(out.ExpiresAt) {
		return out, ErrInvitationExpired
	}
	return out, nil
}

// Accept accepts the invitation of token for a person signed in as email, which must be the one it was
// sent to: the enrollment becomes approved. Accepting it again answers the same program.
func Accept(ctx context.Context, db *sqlx.DB, token, email string, now time.Time) (int64, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var inv struct {
		ID        int64     `db:"id"`
		ProgramID int64     `db:"program_id"`
		PartnerID int64     `db:"partner_id"`
		Email     string    `db:"email"`
		Status    string    `db:"status"`
		ExpiresAt time.Time `db:"expires_at"`
	}
	err = tx.GetContext(ctx, &inv, `SELECT id, program_id, partner_id, email, status, expires_at FROM partner_invitations
		WHERE token_hash = $1 AND status <> 'canceled' FOR UPDATE`, secret.Hash(token))
	switch {
	case errors.Is(err, sql.ErrNoRows) || token == "":
		return 0, ErrInvitationUnknown
	case err != nil:
		return 0, err
	case !strings.EqualFold(inv.Email, email):
		return 0, &OtherEmailError{Invited: inv.Email}
	case inv.Status == InvitationAccepted:
		return inv.ProgramID, nil
	case !now.Before(inv.ExpiresAt):
		return 0, ErrInvitationExpired
	}
	e, err := programs.LockEnrollment(ctx, tx, inv.ProgramID, inv.PartnerID)
	if err != nil {
		return 0, err
	}
	if e.Status == programs.StatusBanned {
		return 0, conflict("You are banned from this program")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE partner_invitations SET status = 'accepted', accepted_at = $2 WHERE id = $1`,
		inv.ID, now); err != nil {
		return 0, err
	}
	if e.Status != programs.StatusApproved {
		if err := programs.SetEnrollment(ctx, tx, e.ID, programs.StatusApproved, nil, now); err != nil {
			return 0, err
		}
	}
	if err := audit.Write(ctx, tx, audit.Entry{At: now, Actor: audit.Operator("partner " + inv.Email), Action: ActionAccept,
		Target: "invitation:" + strconv.FormatInt(inv.ID, 10), Detail: map[string]any{"program_id": inv.ProgramID,
			"partner_id": inv.PartnerID}}); err != nil {
		return 0, err
	}
	return inv.ProgramID, tx.Commit()
}

// Application limits.
const (
	MaxApplicationMessage = 2000
	maxWebsite            = 2048
)

// ErrNotOpen: the program takes partners by invitation only (or does not exist): its page shows nothing.
var ErrNotOpen = errors.New("this program does not take applications")

// Application is what a person sends with an application.
type Application struct {
	Message string
	Website string
}

// Check refuses an application out of its limits.
func (a Application) Check() error {
	if utf8.RuneCountInString(a.Message) > MaxApplicationMessage {
		return invalid("message must be at most %d characters", MaxApplicationMessage)
	}
	if a.Website != "" {
		u, err := url.Parse(a.Website)
		if err != nil || len(a.Website) > maxWebsite || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid("website must be an http or https address")
		}
	}
	return nil
}

// OpenProgram is what an open program's public page shows.
type OpenProgram struct {
	ID           int64  `db:"id"`
	Name         string `db:"name"`
	Domain       string `db:"domain"`
	Slug         string `db:"slug"`
	AutoApproval bool   `db:"auto_approval"`
	programs.Terms
}

// Open reads the open program of slug (ErrNotOpen when there is none).
func Open(ctx context.Context, db sqlx.QueryerContext, slug string) (OpenProgram, error) {
	var p OpenProgram
	err := sqlx.GetContext(ctx, db, &p, `SELECT id, name, domain, slug, `+programs.TermsColumns("programs")+`,
		partner_approval = 'auto' AS auto_approval FROM programs WHERE slug = $1 AND enrollment = 'open' AND status = 'active'`, slug)
	if errors.Is(err, sql.ErrNoRows) {
		return OpenProgram{}, ErrNotOpen
	}
	return p, err
}

// Apply enrolls the person (name, email) in the open program of slug: pending, or approved at once when
// the program approves applications automatically. It answers the enrollment's status.
func Apply(ctx context.Context, db *sqlx.DB, slug, name, email string, a Application, now time.Time) (string, error) {
	if err := a.Check(); err != nil {
		return "", err
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	p, err := Open(ctx, tx, slug)
	if err != nil {
		return "", err
	}
	status := programs.StatusPending
	if p.AutoApproval {
		status = programs.StatusApproved
	}
	if name == "" {
		name = email[:max(strings.LastIndexByte(email, '@'), 0)]
	}
	partner, e, err := programs.Enroll(ctx, tx, p.ID, programs.NewPartner{Name: name, Email: email}, status, now)
	if err != nil {
		return "", err
	}
	switch {
	case e.Status == programs.StatusBanned:
		return "", conflict("You are banned from this program")
	case e.Status == programs.StatusInvited:
		return "", conflict("You are invited to this program: accept the invitation from its mail")
	case e.Status != status:
		return e.Status, nil // applied before, or already a partner: nothing changes
	}
	if err := programs.SetApplication(ctx, tx, e.ID, a.Message, a.Website); err != nil {
		return "", err
	}
	if err := audit.Write(ctx, tx, audit.Entry{At: now, Actor: audit.Operator("partner " + email), Action: ActionApply,
		Target: "partner:" + strconv.FormatInt(partner.ID, 10), Detail: map[string]any{"program_id": p.ID, "status": status}}); err != nil {
		return "", err
	}
	return status, tx.Commit()
}
