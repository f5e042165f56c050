package webhooks

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/pagecursor"
)

// Delivery is one event to one endpoint, with every attempt of it.
type Delivery struct {
	ID            int64      `db:"id"`
	WebhookID     string     `db:"webhook_id"` // the webhook-id header of every attempt
	EndpointID    int64      `db:"endpoint_id"`
	EventType     string     `db:"event_type"`
	OccurredAt    time.Time  `db:"occurred_at"`
	IsTest        bool       `db:"is_test"`
	Status        string     `db:"status"`
	NextAttemptAt *time.Time `db:"next_attempt_at"` // pending: when (nil: at once)
	CreatedAt     time.Time  `db:"created_at"`
	Attempts      []Attempt  `db:"-"`
	EventID       int64      `db:"event_id"` // the log's order: newest event first
}

// Attempt is one try of a delivery.
type Attempt struct {
	DeliveryID     int64     `db:"delivery_id"`
	AttemptedAt    time.Time `db:"attempted_at"`
	Succeeded      bool      `db:"succeeded"`
	ResponseStatus *int      `db:"response_status"` // nil: no response
	DurationMS     int       `db:"duration_ms"`
	ResponseBody   *string   `db:"response_body"` // its first ResponseBodySize bytes
	Error          *string   `db:"error"`
}

// DeliveryFilter narrows an endpoint's delivery log.
type DeliveryFilter struct {
	Status    string // "" for any
	EventType string // "" for any
	Cursor    string
	Limit     int
}

// DeliveryPage is a page of the log, newest first; NextCursor is "" on the last.
type DeliveryPage struct {
	Deliveries []Delivery
	NextCursor string
}

const deliveryColumns = `d.id, d.event_id, d.webhook_id, d.endpoint_id, ev.type AS event_type, ev.occurred_at, ev.is_test, d.status,
	d.next_attempt_at, d.created_at FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id`

// CheckPageSize refuses a page size out of range.
func CheckPageSize(limit int) error {
	if !pagecursor.CheckSize(limit) {
		return invalid("%s", pagecursor.SizeRule)
	}
	return nil
}

func decodeCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	n, err2 := strconv.ParseInt(string(b), 10, 64)
	if err != nil || err2 != nil || n <= 0 {
		return 0, invalid("cursor is not valid")
	}
	return n, nil
}

// Deliveries is a page of the endpoint's delivery log (kept Retention), newest event first, each with
// its attempts in order.
func (s *Store) Deliveries(ctx context.Context, accountID, endpointID int64, f DeliveryFilter) (DeliveryPage, error) {
	if f.Status != "" {
		if err := CheckStatus(f.Status); err != nil {
			return DeliveryPage{}, err
		}
	}
	if f.EventType != "" {
		if err := CheckEventType(f.EventType); err != nil {
			return DeliveryPage{}, err
		}
	}
	limit, ok := pagecursor.Size(f.Limit)
	if !ok {
		return DeliveryPage{}, invalid("%s", pagecursor.SizeRule)
	}
	before, err := decodeCursor(f.Cursor)
	if err != nil {
		return DeliveryPage{}, err
	}
	if _, err := endpointAccess(ctx, s.DB, accountID, endpointID); err != nil {
		return DeliveryPage{}, err
	}
	out := []Delivery{}
	if err := sqlx.SelectContext(ctx, s.DB, &out, `SELECT `+deliveryColumns+` WHERE d.endpoint_id = $1
		AND ($2 = '' OR d.status = $2) AND ($3 = '' OR ev.type = $3) AND ($4::bigint = 0 OR d.event_id < $4::bigint)
		ORDER BY d.event_id DESC LIMIT $5`, endpointID, f.Status, f.EventType, before, limit+1); err != nil {
		return DeliveryPage{}, err
	}
	page := DeliveryPage{Deliveries: out}
	if len(out) > limit {
		page.Deliveries = out[:limit]
		page.NextCursor = base64.RawURLEncoding.EncodeToString(strconv.AppendInt(nil, out[limit-1].EventID, 10))
	}
	return page, s.withAttempts(ctx, page.Deliveries)
}

func (s *Store) withAttempts(ctx context.Context, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]int64, len(ds))
	at := make(map[int64]int, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
		at[d.ID] = i
		ds[i].Attempts = []Attempt{}
	}
	var attempts []Attempt
	if err := sqlx.SelectContext(ctx, s.DB, &attempts, `SELECT delivery_id, attempted_at, succeeded, response_status,
		duration_ms, response_body, error FROM webhook_attempts WHERE delivery_id = ANY ($1) ORDER BY delivery_id, attempted_at`, pq.Int64Array(ids)); err != nil {
		return err
	}
	for _, a := range attempts {
		i := at[a.DeliveryID]
		ds[i].Attempts = append(ds[i].Attempts, a)
	}
	return nil
}

// getDelivery reads one delivery with its attempts.
func (s *Store) getDelivery(ctx context.Context, id int64) (Delivery, error) {
	var d Delivery
	err := sqlx.GetContext(ctx, s.DB, &d, `SELECT `+deliveryColumns+` WHERE d.id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, ErrDeliveryNotFound
	}
	if err != nil {
		return Delivery{}, err
	}
	ds := []Delivery{d}
	if err := s.withAttempts(ctx, ds); err != nil {
		return Delivery{}, err
	}
	return ds[0], nil
}

// Resend queues a delivery again, at once, with a full schedule of attempts and the same webhook-id.
func (s *Store) Resend(ctx context.Context, r Request, id int64) (Delivery, error) {
	var endpointID int64
	err := sqlx.GetContext(ctx, s.DB, &endpointID, `SELECT endpoint_id FROM webhook_deliveries WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, ErrDeliveryNotFound
	}
	if err != nil {
		return Delivery{}, err
	}
	e, err := endpointAccess(ctx, s.DB, r.AccountID, endpointID)
	if errors.Is(err, ErrEndpointNotFound) {
		return Delivery{}, ErrDeliveryNotFound
	}
	if err != nil {
		return Delivery{}, err
	}
	err = audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0,
			next_attempt_at = NULL, leased_until = NULL, updated_at = $2 WHERE id = $1`, id, r.Now); err != nil {
			return audit.Entry{}, err
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_delivery.resend", Target: audit.ProgramTarget(e.ProgramID),
			Detail: map[string]any{"endpoint_id": e.ID, "delivery_id": id}}, nil
	})
	if err != nil {
		return Delivery{}, err
	}
	return s.getDelivery(ctx, id)
}

// Recover queues again, at once, every event of the endpoint's types since `since` (and since the endpoint
// was created) whose delivery to it did not succeed, including those it never got while disabled (test-mode
// changes too; samples sent to one endpoint never) and those waiting for a retry: each is due now, with a
// full schedule of attempts. A delivery being attempted (its lease held) is left to that attempt, whose
// record would otherwise no longer match it. It returns how many were queued.
func (s *Store) Recover(ctx context.Context, r Request, endpointID int64, since time.Time) (int64, error) {
	e, err := endpointAccess(ctx, s.DB, r.AccountID, endpointID)
	if err != nil {
		return 0, err
	}
	if since.After(r.Now) {
		return 0, invalid("since must not be in the future")
	}
	var n int64
	err = audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		err := sqlx.GetContext(ctx, tx, &n, `WITH queued AS (
				INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id, updated_at)
				SELECT webhooks_message_id(), e.id, ev.id, $3
				FROM webhook_endpoints e JOIN webhook_events ev ON ev.program_id = e.program_id
				WHERE e.id = $1 AND ev.occurred_at >= $2 AND ev.occurred_at >= e.created_at AND NOT ev.sample
					AND (e.event_types IS NULL OR ev.type = ANY (e.event_types))
				ON CONFLICT (endpoint_id, event_id) DO UPDATE SET status = 'pending', attempt_count = 0,
					next_attempt_at = NULL, leased_until = NULL, updated_at = EXCLUDED.updated_at
				WHERE webhook_deliveries.status = 'failed' OR (webhook_deliveries.status = 'pending'
					AND webhook_deliveries.next_attempt_at > $3
					AND (webhook_deliveries.leased_until IS NULL OR webhook_deliveries.leased_until <= $3))
				RETURNING 1)
			SELECT count(*) FROM queued`, endpointID, since, r.Now)
		if err != nil {
			return audit.Entry{}, err
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_endpoint.recover", Target: audit.ProgramTarget(e.ProgramID),
			Detail: map[string]any{"endpoint_id": e.ID, "since": since, "queued": n}}, nil
	})
	return n, err
}

// SendTest queues a sample event of type eventType (data.is_test true) to this endpoint alone.
func (s *Store) SendTest(ctx context.Context, r Request, endpointID int64, eventType string) (Delivery, error) {
	if err := CheckEventType(eventType); err != nil {
		return Delivery{}, err
	}
	e, err := endpointAccess(ctx, s.DB, r.AccountID, endpointID)
	if err != nil {
		return Delivery{}, err
	}
	if s.Shape == nil {
		return Delivery{}, errors.New("webhooks: no Shape to make samples with (the server wires webhookdata.Data)")
	}
	data, err := s.Shape(Sample(eventType, e.ProgramID, r.Now))
	if err != nil {
		return Delivery{}, err
	}
	var id int64
	err = audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		err := sqlx.GetContext(ctx, tx, &id, `WITH ev AS (
				INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, data, is_test, sample)
					VALUES ($1, $2, $3, 0, $4, true, true)
				RETURNING id)
			INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id, created_at, updated_at)
			SELECT webhooks_message_id(), $5, ev.id, $3, $3 FROM ev RETURNING id`,
			e.ProgramID, eventType, r.Now, string(data), e.ID)
		if err != nil {
			return audit.Entry{}, err
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_endpoint.test", Target: audit.ProgramTarget(e.ProgramID),
			Detail: map[string]any{"endpoint_id": e.ID, "event_type": eventType}}, nil
	})
	if err != nil {
		return Delivery{}, err
	}
	return s.getDelivery(ctx, id)
}
