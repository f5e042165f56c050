// Package audit owns the audit log of operator actions: suspending and unsuspending an account, marking
// a program's API key for rotation and regenerating it. Each record is written in the transaction of the
// action it records, so there is no action without its record and no record of an action that failed.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Actions recorded.
const (
	ActionAccountSuspend   = "account.suspend"
	ActionAccountUnsuspend = "account.unsuspend"
	ActionKeyMarkRotation  = "api_key.mark_rotation"
	ActionKeyRegenerate    = "api_key.regenerate"
)

// ErrNoActor refuses a record that does not say who acted.
var ErrNoActor = errors.New("audit record without an actor")

// Actor is who acted: an operator (Name is the OS user or `--actor`, AccountID 0) or a signed-in account
// (Name is its email).
type Actor struct {
	Name      string
	AccountID int64
}

// Operator is an operator acting through reftrackd.
func Operator(name string) Actor { return Actor{Name: name} }

// Account is a signed-in account acting through the API or the dashboard.
func Account(id int64, email string) Actor { return Actor{Name: email, AccountID: id} }

// Entry is one action to record.
type Entry struct {
	At     time.Time
	Actor  Actor
	Action string
	// Target names what was acted on, e.g. "account:12" or "program:5".
	Target string
	// Detail is a small JSON object (nil for none).
	Detail map[string]any
}

// Record is a stored entry.
type Record struct {
	ID             int64           `db:"id" json:"id"`
	At             time.Time       `db:"at" json:"at"`
	Actor          string          `db:"actor" json:"actor"`
	ActorAccountID *int64          `db:"actor_account_id" json:"actor_account_id"`
	Action         string          `db:"action" json:"action"`
	Target         string          `db:"target" json:"target"`
	Detail         json.RawMessage `db:"detail" json:"detail"`
}

// Target names of the things acted on.
func AccountTarget(id int64) string { return fmt.Sprintf("account:%d", id) }

// ProgramTarget names a program (its API key is the program's one active key).
func ProgramTarget(id int64) string { return fmt.Sprintf("program:%d", id) }

// Write stores e in the caller's transaction; call it in the transaction of the action it records.
func Write(ctx context.Context, tx sqlx.ExecerContext, e Entry) error {
	if e.Actor.Name == "" {
		return ErrNoActor
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	detail := []byte("{}")
	if e.Detail != nil {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return fmt.Errorf("audit detail: %w", err)
		}
		detail = b
	}
	var accountID any
	if e.Actor.AccountID != 0 {
		accountID = e.Actor.AccountID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (at, actor, actor_account_id, action, target, detail)
		VALUES ($1, $2, $3, $4, $5, $6)`, e.At.UTC(), e.Actor.Name, accountID, e.Action, e.Target, string(detail)) // text: binary parameters would be read as jsonb's binary format
	if err != nil {
		return fmt.Errorf("write audit record: %w", err)
	}
	return nil
}

// Do runs action in one transaction with the record of it: action does its work in tx and returns the
// entry to record; an error from either rolls both back.
func Do(ctx context.Context, db *sqlx.DB, action func(tx *sqlx.Tx) (Entry, error)) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	e, err := action(tx)
	if err != nil {
		return err
	}
	if err := Write(ctx, tx, e); err != nil {
		return err
	}
	return tx.Commit()
}

// List returns the newest records first, at most limit of them.
func List(ctx context.Context, db sqlx.QueryerContext, limit int) ([]Record, error) {
	out := []Record{}
	err := sqlx.SelectContext(ctx, db, &out, `SELECT id, at, actor, actor_account_id, action, target, detail
		FROM audit_log ORDER BY at DESC, id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit records: %w", err)
	}
	return out, nil
}
