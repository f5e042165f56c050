// Package payments turns a connected payment processor's webhook events (Stripe) into sales, settled
// leads and reversed commissions, through the same code the sale, lead and refund endpoints use.
package payments

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
)

// ProviderStripe is the one processor connected today.
const ProviderStripe = "stripe"

// ErrNotConnected means the program has no webhook secret for the processor.
var ErrNotConnected = errors.New("payment processor not connected")

// Connection is a program's processor connection. The secret never leaves the server.
type Connection struct {
	ProgramID      int64     `db:"program_id"`
	Provider       string    `db:"provider"`
	WebhookSecret  string    `db:"webhook_secret"`
	ChargesEnabled bool      `db:"charges_enabled"`
	UpdatedAt      time.Time `db:"updated_at"`
}

// Connect stores (or replaces) the program's webhook signing secret.
func Connect(ctx context.Context, db sqlx.QueryerContext, programID int64, provider, secret string) (Connection, error) {
	var c Connection
	err := sqlx.GetContext(ctx, db, &c, `INSERT INTO processor_connections (program_id, provider, webhook_secret)
		VALUES ($1, $2, $3)
		ON CONFLICT (program_id, provider) DO UPDATE SET webhook_secret = EXCLUDED.webhook_secret, updated_at = now()
		RETURNING program_id, provider, webhook_secret, charges_enabled, updated_at`, programID, provider, secret)
	return c, err
}

// markChargesEnabled records that a live-mode payment event, its signature verified, reached the program's
// connection to provider: charges reach us (shown by status and readiness).
func markChargesEnabled(ctx context.Context, db sqlx.ExecerContext, programID int64, provider string) error {
	_, err := db.ExecContext(ctx, `UPDATE processor_connections SET charges_enabled = true
		WHERE program_id = $1 AND provider = $2 AND NOT charges_enabled`, programID, provider)
	return err
}

// Get returns the program's connection to provider, or ErrNotConnected.
func Get(ctx context.Context, db sqlx.QueryerContext, programID int64, provider string) (Connection, error) {
	var c Connection
	err := sqlx.GetContext(ctx, db, &c, `SELECT program_id, provider, webhook_secret, charges_enabled, updated_at
		FROM processor_connections WHERE program_id = $1 AND provider = $2`, programID, provider)
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, ErrNotConnected
	}
	return c, err
}
