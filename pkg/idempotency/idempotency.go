// Package idempotency gives a POST sent with an Idempotency-Key its first answer again: the same key with
// the same request within 24 hours answers what the first answered and changes nothing; with another
// request, ErrKeyReused. It owns the table idempotency_keys.
//
// The key is taken in the action's own transaction, before the action: a second request with the key
// waits on the first's row until the first commits (then it reads the first's result) or rolls back (then
// it acts itself). So there is no window in which both act, and no answer stored for an action that did
// not happen. Only successful answers are kept: a refused request changed nothing, and sending it again
// is asked again.
package idempotency

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
)

// Window is how long a key's answer is kept.
const Window = 24 * time.Hour

// MaxKeyLength bounds a key, in characters.
const MaxKeyLength = 255

// Errors of this package.
var (
	ErrKeyReused  = errors.New("Idempotency-Key reused with a different request")
	ErrKeyInvalid = errors.New("Idempotency-Key must be 1 to 255 characters")
)

// Key is one request's Idempotency-Key: who sent it, the key, and what the request was (Hash).
type Key struct {
	AccountID int64
	Key       string
	Hash      []byte
}

// New is the key of an account's request; parts name the request (the operation, its path parameters and
// its body, in that order), so that the same key on another request is told apart. An empty key is none
// (nil); a key out of range is ErrKeyInvalid.
func New(accountID int64, key string, parts ...[]byte) (*Key, error) {
	if key == "" {
		return nil, nil
	}
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, p := range parts {
		// Each part is length-prefixed, so that parts cannot run into each other.
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return &Key{AccountID: accountID, Key: key, Hash: h.Sum(nil)}, nil
}

// CheckKey refuses a key that is not 1 … MaxKeyLength characters of UTF-8 (ErrKeyInvalid).
func CheckKey(key string) error {
	if n := utf8.RuneCountInString(key); n < 1 || n > MaxKeyLength || !utf8.ValidString(key) {
		return ErrKeyInvalid
	}
	return nil
}

// Run runs action in a transaction holding k (none when k is nil) and commits. When k already holds a
// first answer within Window, Run answers it instead, decoded into T, and action is not run; a key held by
// another request is ErrKeyReused. now is the server's clock.
func Run[T any](ctx context.Context, db *sqlx.DB, k *Key, now time.Time, action func(tx *sqlx.Tx) (T, error)) (T, error) {
	var zero T
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return zero, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if k != nil {
		first, held, err := take(ctx, tx, k, now)
		if err != nil {
			return zero, err
		}
		if held {
			var out T
			if err := json.Unmarshal(first, &out); err != nil {
				return zero, fmt.Errorf("idempotency key's stored answer: %w", err)
			}
			return out, nil
		}
	}
	out, err := action(tx)
	if err != nil {
		return zero, err
	}
	if k != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return zero, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET result = $3 WHERE account_id = $1 AND key = $2`,
			k.AccountID, k.Key, string(b)); err != nil {
			return zero, err
		}
	}
	if err := tx.Commit(); err != nil {
		return zero, err
	}
	return out, nil
}

// take claims k in tx: a new key, or one whose answer is older than Window, is taken (held false). A live
// key answers its stored result (held true), or ErrKeyReused for another request. A concurrent first
// request with k is waited for: the insert blocks on its row until it commits or rolls back.
func take(ctx context.Context, tx *sqlx.Tx, k *Key, now time.Time) ([]byte, bool, error) {
	var taken bool
	err := tx.GetContext(ctx, &taken, `INSERT INTO idempotency_keys AS i (account_id, key, request_hash, result, created_at)
		VALUES ($1, $2, $3, 'null', $4)
		ON CONFLICT (account_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, result = 'null',
			created_at = EXCLUDED.created_at
		WHERE i.created_at <= $4::timestamptz - $5 * interval '1 second'
		RETURNING true`, k.AccountID, k.Key, k.Hash, now, int64(Window/time.Second))
	switch {
	case err == nil:
		return nil, false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, false, err
	}
	var first struct {
		Hash   []byte `db:"request_hash"`
		Result []byte `db:"result"`
	}
	if err := tx.GetContext(ctx, &first, `SELECT request_hash, result FROM idempotency_keys WHERE account_id = $1 AND key = $2`,
		k.AccountID, k.Key); err != nil {
		return nil, false, err
	}
	if string(first.Hash) != string(k.Hash) {
		return nil, false, ErrKeyReused
	}
	return first.Result, true, nil
}

// Expire deletes the answers older than Window (the server's background work).
func Expire(ctx context.Context, db sqlx.ExecerContext, now time.Time) (int64, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at <= $1`, now.Add(-Window))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
