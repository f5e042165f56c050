// Package apikeys owns program API keys: it issues them (a program's first key, regeneration by a
// workspace owner), authenticates them and manages mandatory rotation (marked, then retired after its
// deadline).
package apikeys

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/secret"
)

// ErrUnknown means the token matches no program (wrong, replaced, or never issued).
var ErrUnknown = errors.New("api key matches no program")

// ErrNoProgram means the program does not exist.
var ErrNoProgram = errors.New("program not found")

// ErrNoKey means the program has no active key.
var ErrNoKey = errors.New("program has no active api key")

// Key is an active program API key.
type Key struct {
	ID        int64      `db:"id"`
	ProgramID int64      `db:"program_id"`
	Last4     string     `db:"last4"`
	CreatedAt time.Time  `db:"created_at"`
	MarkedAt  *time.Time `db:"rotation_marked_at"`
	RotateBy  *time.Time `db:"rotate_by"`
}

// Marked reports whether the key is marked for rotation and still usable at now.
func (k Key) Marked(now time.Time) bool { return k.RotateBy != nil && now.Before(*k.RotateBy) }

// Retired reports whether the key's rotation deadline has passed at now.
func (k Key) Retired(now time.Time) bool { return k.RotateBy != nil && !now.Before(*k.RotateBy) }

// Masked is how the key is shown after it was issued.
func (k Key) Masked() string { return secret.Mask(secret.ProgramKeyPrefix, k.Last4) }

// Authenticate finds the active key for token. A key of a program whose owner account is suspended
// answers accounts.ErrSuspended.
func Authenticate(ctx context.Context, db sqlx.QueryerContext, token string) (Key, error) {
	lk := &lookup{hash: secret.Hash(token)}
	lookUp(ctx, db, []*lookup{lk})
	return lk.key, lk.err
}

// Current is the program's active key.
func Current(ctx context.Context, db sqlx.QueryerContext, programID int64) (Key, error) {
	const q = `SELECT id, program_id, last4, created_at, rotation_marked_at, rotate_by
		FROM api_keys WHERE program_id = $1 AND revoked_at IS NULL`
	var k Key
	err := sqlx.GetContext(ctx, db, &k, q, programID)
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, ErrNoKey
	}
	return k, err
}

// Regenerate revokes the program's active key and issues a new one, and records the regeneration by
// in the audit log at now, all in one transaction: the old key stops matching at once. The new key's
// plain text is returned once.
func Regenerate(ctx context.Context, db *sqlx.DB, programID int64, by audit.Actor, now time.Time) (Key, string, error) {
	var (
		k     Key
		plain string
	)
	err := audit.Do(ctx, db, func(tx *sqlx.Tx) (audit.Entry, error) {
		var exists bool
		if err := tx.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM programs WHERE id = $1 FOR UPDATE)`, programID); err != nil {
			return audit.Entry{}, err
		}
		if !exists {
			return audit.Entry{}, ErrNoProgram
		}
		var old []string
		if err := tx.SelectContext(ctx, &old, `UPDATE api_keys SET revoked_at = now() WHERE program_id = $1 AND revoked_at IS NULL
			RETURNING last4`, programID); err != nil {
			return audit.Entry{}, err
		}
		var err error
		k, plain, err = Issue(ctx, tx, programID, by.AccountID)
		if err != nil {
			return audit.Entry{}, err
		}
		detail := map[string]any{"new_key": k.Masked()}
		if len(old) == 1 {
			detail["old_key"] = secret.Mask(secret.ProgramKeyPrefix, old[0])
		}
		return audit.Entry{At: now, Actor: by, Action: audit.ActionKeyRegenerate, Target: audit.ProgramTarget(programID), Detail: detail}, nil
	})
	if err != nil {
		return Key{}, "", err
	}
	return k, plain, nil
}

// Issue makes a new active key for the program, in the caller's transaction if any (a program's first
// key is issued in the transaction that creates the program), and returns its plain text once.
func Issue(ctx context.Context, db sqlx.QueryerContext, programID, byAccount int64) (Key, string, error) {
	s, err := secret.New(secret.ProgramKeyPrefix)
	if err != nil {
		return Key{}, "", err
	}
	var k Key
	err = sqlx.GetContext(ctx, db, &k, `INSERT INTO api_keys (program_id, key_hash, last4, created_by)
		VALUES ($1, $2, $3, $4) RETURNING id, program_id, last4, created_at, rotation_marked_at, rotate_by`,
		programID, s.Hash, s.Last4, byAccount)
	if err != nil {
		return Key{}, "", err
	}
	return k, s.Plain, nil
}

// MarkRotation marks the program's active key for mandatory rotation by rotateBy, in the caller's
// transaction if any (the operator's command records it in the audit log in the same transaction).
func MarkRotation(ctx context.Context, db sqlx.ExtContext, programID int64, rotateBy time.Time) (Key, error) {
	res, err := db.ExecContext(ctx, `UPDATE api_keys SET rotation_marked_at = now(), rotate_by = $2
		WHERE program_id = $1 AND revoked_at IS NULL`, programID, rotateBy)
	if err != nil {
		return Key{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Key{}, ErrNoKey
	}
	return Current(ctx, db, programID)
}

// RotatedAt is when the program's key was last regenerated (its current key's creation, if an older key
// was revoked), or nil when the first key is still in use.
func RotatedAt(ctx context.Context, db sqlx.QueryerContext, programID int64) (*time.Time, error) {
	var t *time.Time
	err := sqlx.GetContext(ctx, db, &t, `SELECT CASE WHEN EXISTS (SELECT 1 FROM api_keys WHERE program_id = $1 AND revoked_at IS NOT NULL)
		THEN (SELECT created_at FROM api_keys WHERE program_id = $1 AND revoked_at IS NULL) END`, programID)
	return t, err
}
