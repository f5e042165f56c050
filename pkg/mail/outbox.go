package mail

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
)

// The outbox: mail is written in the transaction of the change it tells of (Enqueue), so a change that
// committed always has its mail, and a Courier sends it afterwards, at least once.

// Courier retry policy: a message whose sending failed waits retryBase × 2^(attempts−1), at most
// retryMax, and is given up after MaxAttempts (about two days); its last_error says why.
const (
	MaxAttempts = 12
	retryBase   = 30 * time.Second
	retryMax    = 6 * time.Hour
	// lease is how long a courier holds a message it is sending: one that died meanwhile leaves it to
	// another after that.
	lease = 2 * time.Minute
)

// Enqueue writes m to the outbox in tx (the change's transaction), due at now (by the server's clock,
// which the courier reads too).
func Enqueue(ctx context.Context, tx sqlx.ExecerContext, m Message, now time.Time) error {
	if err := m.check(); err != nil {
		return err
	}
	var html *string
	if m.HTML != "" {
		html = &m.HTML
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox (to_address, subject, text_body, html_body, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $5)`, m.To, m.Subject, m.Text, html, now)
	return err
}

// Courier sends the outbox's due messages through Sender.
type Courier struct {
	DB     *sqlx.DB
	Sender Sender
	Now    func() time.Time
	Log    *slog.Logger
}

type queued struct {
	ID       int64   `db:"id"`
	To       string  `db:"to_address"`
	Subject  string  `db:"subject"`
	Text     string  `db:"text_body"`
	HTML     *string `db:"html_body"`
	Attempts int     `db:"attempts"`
}

// SendDue sends up to limit due messages (oldest first) and answers how many it took, sent or not. Each
// is leased first, so couriers of several replicas never send the same message at the same time; one
// sent is kept without its bodies (an invitation's link lives in the mailbox it went to).
func (c *Courier) SendDue(ctx context.Context, limit int) (int, error) {
	now := c.Now()
	var batch []queued
	err := c.DB.SelectContext(ctx, &batch, `UPDATE mail_outbox m SET leased_until = $1, attempts = m.attempts + 1
		WHERE m.id IN (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND next_attempt_at <= $2 AND attempts < $3
			AND (leased_until IS NULL OR leased_until <= $2) ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING m.id, m.to_address, m.subject, m.text_body, m.html_body, m.attempts`, now.Add(lease), now, MaxAttempts, limit)
	if err != nil {
		return 0, err
	}
	for _, q := range batch {
		m := Message{To: q.To, Subject: q.Subject, Text: q.Text}
		if q.HTML != nil {
			m.HTML = *q.HTML
		}
		if err := c.Sender.Send(ctx, m); err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			c.Log.WarnContext(ctx, "mail not sent", "mail_id", q.ID, "attempt", q.Attempts, "err", err)
			if _, err := c.DB.ExecContext(ctx, `UPDATE mail_outbox SET leased_until = NULL, next_attempt_at = $2, last_error = $3
				WHERE id = $1`, q.ID, c.Now().Add(retryAfter(q.Attempts)), err.Error()); err != nil {
				return 0, err
			}
			continue
		}
		if _, err := c.DB.ExecContext(ctx, `UPDATE mail_outbox SET sent_at = $2, leased_until = NULL, last_error = NULL,
			text_body = NULL, html_body = NULL WHERE id = $1`, q.ID, c.Now()); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
}

// SendAll sends every due message, batch after batch (tests, and the courier's pass).
func (c *Courier) SendAll(ctx context.Context) error {
	for {
		n, err := c.SendDue(ctx, 20)
		if err != nil || n < 20 {
			return err
		}
	}
}

// retryAfter is the wait after the attempts-th failed attempt.
func retryAfter(attempts int) time.Duration {
	d := retryBase
	for i := 1; i < attempts && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// Pending answers how many messages wait to be sent (not given up).
func Pending(ctx context.Context, db sqlx.QueryerContext) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, db, &n, `SELECT count(*) FROM mail_outbox WHERE sent_at IS NULL AND attempts < $1`, MaxAttempts)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
