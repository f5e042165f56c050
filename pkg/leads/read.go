package leads

import (
	"context"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/programs"
)

// ErrNotFound means there is no lead of that id.
var ErrNotFound = errors.New("lead not found")

// Lead is a lead as the management API shows it (GET /api/v1/leads/{leadId}); its lead.created webhook
// carries the same. Timestamp is the lead's lead_timestamp, named as the events list names it.
type Lead struct {
	ID          int64     `db:"id"`
	ProgramID   int64     `db:"program_id"`
	Timestamp   time.Time `db:"lead_timestamp"`
	ClickID     *string   `db:"click_id"`
	SessionID   *string   `db:"session_id"`
	PageURL     *string   `db:"page_url"`
	CustomerKey *string   `db:"customer_key"`
	Converted   bool      `db:"converted"`
	IsTest      bool      `db:"is_test"`
	CreatedAt   time.Time `db:"created_at"`
}

const leadColumns = `l.id, l.program_id, l.lead_timestamp, l.click_id, l.session_id, l.page_url, l.customer_key,
	l.converted, l.is_test, l.created_at
	FROM leads l`

// Read reads the leads of ids, in one query, in no particular order; ids that name no lead are left out.
// The webhook worker reads a batch of events' leads with it.
func Read(ctx context.Context, q sqlx.QueryerContext, ids []int64) ([]Lead, error) {
	out := []Lead{}
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+leadColumns+` WHERE l.id = ANY ($1)`, pq.Array(ids))
	return out, err
}

// Get is one lead, for a member whose role may list its program's tracking events (tracking:list):
// ErrNotFound when there is none, else programs.Access's refusals.
func Get(ctx context.Context, db sqlx.QueryerContext, accountID, id int64) (Lead, error) {
	return programs.AccessOne(ctx, db, accountID, id, accounts.ActionTrackingList, ErrNotFound, Read,
		func(l Lead) int64 { return l.ProgramID })
}
