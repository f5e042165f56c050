package programs

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Enrollment statuses of a partner in a program: invited → approved (on accepting the invitation);
// pending (applied) → approved | rejected; approved → banned.
const (
	StatusInvited  = "invited"
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusBanned   = "banned"
	// statusWithdrawn is an invitation's enrollment after the invitation was canceled: the partner is no
	// longer in the program and may be invited again. Never shown (the partner is left out of lists).
	statusWithdrawn = "removed"
)

// StatusColumn reads a partner-program relationship's status (pp) as a Status* constant: 'active', what a
// brand's adding a partner writes (the column's default), is approved.
const StatusColumn = `CASE pp.status WHEN 'active' THEN 'approved' ELSE pp.status END`

// ErrPartnerBanned refuses turning on, or making, a link of a banned partner.
var ErrPartnerBanned = errors.New("the partner is banned from this program")

// Enrollment is one partner's relationship with one program, locked by LockEnrollment.
type Enrollment struct {
	ID        int64  `db:"id"`
	PartnerID int64  `db:"partner_id"`
	ProgramID int64  `db:"program_id"`
	Status    string `db:"status"`
}

// LockEnrollment locks the partner's relationship with the program for the rest of tx (ErrPartnerNotFound
// when there is none, or it was withdrawn).
func LockEnrollment(ctx context.Context, tx sqlx.QueryerContext, programID, partnerID int64) (Enrollment, error) {
	var e Enrollment
	err := sqlx.GetContext(ctx, tx, &e, `SELECT pp.id, pp.partner_id, pp.program_id, `+StatusColumn+` AS status
		FROM partner_programs pp WHERE pp.program_id = $1 AND pp.partner_id = $2 AND pp.status <> 'removed' FOR UPDATE`,
		programID, partnerID)
	if errors.Is(err, sql.ErrNoRows) {
		return Enrollment{}, ErrPartnerNotFound
	}
	return e, err
}

// SetEnrollment changes the relationship's status (and the reason given with it) in tx; the caller has
// locked it and decided the transition is allowed.
func SetEnrollment(ctx context.Context, tx sqlx.ExecerContext, id int64, status string, reason *string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE partner_programs SET status = $2, status_reason = $3, status_changed_at = $4
		WHERE id = $1`, id, status, reason, now)
	return err
}

// Withdraw takes an invited partner out of the program (their invitation was canceled).
func Withdraw(ctx context.Context, tx sqlx.ExecerContext, id int64, now time.Time) error {
	return SetEnrollment(ctx, tx, id, statusWithdrawn, nil, now)
}

// Enroll makes (or reuses) the workspace's partner with email and puts them in the program with status,
// in tx: a new relationship, or one that was withdrawn or rejected, takes status; any other is returned
// as it is, for the caller to refuse. It returns the partner and the relationship as it stands, locked.
func Enroll(ctx context.Context, tx sqlx.ExtContext, programID int64, n NewPartner, status string, now time.Time) (Partner, Enrollment, error) {
	p, err := Get(ctx, tx, programID)
	if err != nil {
		return Partner{}, Enrollment{}, err
	}
	var partnerID int64
	err = sqlx.GetContext(ctx, tx, &partnerID, `INSERT INTO partners (workspace_id, name, email) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, lower(email)) DO UPDATE SET name = partners.name RETURNING id`, p.WorkspaceID, n.Name, n.Email)
	if err != nil {
		return Partner{}, Enrollment{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO partner_programs (partner_id, program_id, status, status_changed_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (partner_id, program_id) DO UPDATE SET status = EXCLUDED.status, status_reason = NULL,
			status_changed_at = EXCLUDED.status_changed_at
		WHERE partner_programs.status IN ('removed', 'rejected')`, partnerID, programID, status, now); err != nil {
		return Partner{}, Enrollment{}, err
	}
	e, err := LockEnrollment(ctx, tx, programID, partnerID)
	if err != nil {
		return Partner{}, Enrollment{}, err
	}
	out, err := PartnerOf(ctx, tx, programID, partnerID)
	return out, e, err
}

// PartnerOf reads one partner of the program, with their stats (ErrPartnerNotFound when they are not in it).
func PartnerOf(ctx context.Context, q sqlx.QueryerContext, programID, partnerID int64) (Partner, error) {
	var out Partner
	err := sqlx.GetContext(ctx, q, &out, partnerQuery+` WHERE pp.program_id = $1 AND pa.id = $2 AND pp.status <> 'removed'`,
		programID, partnerID)
	if errors.Is(err, sql.ErrNoRows) {
		return Partner{}, ErrPartnerNotFound
	}
	if err != nil {
		return Partner{}, err
	}
	stats, err := statsOf(ctx, q, programID, []int64{partnerID})
	out.Stats = stats[partnerID]
	return out, err
}

// statsOf counts the real events of the program's partners (of partnerIDs only, when given), by partner
// (programs_partner_stats).
func statsOf(ctx context.Context, q sqlx.QueryerContext, programID int64, partnerIDs []int64) (map[int64]Stats, error) {
	var only any
	if partnerIDs != nil {
		only = pq.Array(partnerIDs)
	}
	var rows []struct {
		PartnerID int64 `db:"partner_id"`
		Stats
	}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT partner_id, clicks, leads, sales FROM programs_partner_stats($1, $2)`, programID, only)
	out := make(map[int64]Stats, len(rows))
	for _, r := range rows {
		out[r.PartnerID] = r.Stats
	}
	return out, err
}

// DisablePartnerLinks turns off the partner's links in the program (a ban), in tx; it returns how many
// were on.
func DisablePartnerLinks(ctx context.Context, tx sqlx.ExecerContext, programID, partnerID int64) (int64, error) {
	res, err := tx.ExecContext(ctx, `UPDATE referral_links SET enabled = false, updated_at = now()
		WHERE program_id = $1 AND partner_id = $2 AND enabled`, programID, partnerID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
