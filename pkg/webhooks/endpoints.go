package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/seal"
)

// Endpoint is a program's receiver of events.
type Endpoint struct {
	ID             int64          `db:"id"`
	ProgramID      int64          `db:"program_id"`
	URL            string         `db:"url"`
	EventTypes     pq.StringArray `db:"event_types"` // nil: every type
	Description    *string        `db:"description"`
	Enabled        bool           `db:"enabled"`
	DisabledReason *string        `db:"disabled_reason"`
	// RotatingUntil: the previous secret signs deliveries too until then (a rotation).
	RotatingUntil *time.Time `db:"previous_secret_until"`
	CreatedAt     time.Time  `db:"created_at"`
	UpdatedAt     time.Time  `db:"updated_at"`
}

const endpointColumns = `id, program_id, url, event_types, description, enabled, disabled_reason,
	previous_secret_until, created_at, updated_at`

// Request is who acts, and when (the server's clock).
type Request struct {
	AccountID int64
	Email     string
	Now       time.Time
}

func (r Request) actor() audit.Actor { return audit.Account(r.AccountID, r.Email) }

// Store is what the endpoint routes need: the database, the URL rule, the secrets' sealer, and the shape
// of events' data (samples are shaped as real events are; NewWorker hands it to the worker).
type Store struct {
	DB     *sqlx.DB
	Policy egress.Policy
	Sealer *seal.Sealer
	Shape  Shape
}

// EndpointInput is a new endpoint, or the fields a change sets (nil: unchanged).
type EndpointInput struct {
	URL         *string
	EventTypes  *[]string // an empty list is every type
	Description *string
	Enabled     *bool
}

func (s *Store) check(ctx context.Context, in EndpointInput) error {
	if in.URL != nil {
		u := *in.URL
		if utf8.RuneCountInString(u) > MaxURL {
			return invalid("url must be at most %d characters", MaxURL)
		}
		if err := s.Policy.CheckURL(ctx, u); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var r *egress.Refusal
			if errors.As(err, &r) {
				return invalid("%s", r.Message)
			}
			return invalid("%s", egress.ErrNotPublic.Error())
		}
	}
	if in.EventTypes != nil {
		for _, t := range *in.EventTypes {
			if err := CheckEventType(t); err != nil {
				return err
			}
		}
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxDescription {
		return invalid("description must be at most %d characters", MaxDescription)
	}
	return nil
}

func access(ctx context.Context, db sqlx.QueryerContext, accountID, programID int64) error {
	_, err := programs.Access(ctx, db, accountID, programID, accounts.ActionWebhooksManage)
	if errors.Is(err, programs.ErrNotFound) {
		return ErrProgramNotFound
	}
	return err
}

// endpointAccess is the endpoint id once the account may manage its program's webhooks.
func endpointAccess(ctx context.Context, db sqlx.QueryerContext, accountID, id int64) (Endpoint, error) {
	var e Endpoint
	err := sqlx.GetContext(ctx, db, &e, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, ErrEndpointNotFound
	}
	if err != nil {
		return Endpoint{}, err
	}
	return e, access(ctx, db, accountID, e.ProgramID)
}

// types is the list to store: sorted, each once; nil (every type) for none.
func types(in *[]string) any {
	if in == nil || len(*in) == 0 {
		return nil
	}
	out := slices.Clone(*in)
	slices.Sort(out)
	return pq.StringArray(slices.Compact(out))
}

// Create adds an endpoint to the program and returns it with its secret, which is shown this once.
func (s *Store) Create(ctx context.Context, r Request, programID int64, in EndpointInput) (Endpoint, string, error) {
	if in.URL == nil {
		return Endpoint{}, "", invalid("url is required")
	}
	if err := access(ctx, s.DB, r.AccountID, programID); err != nil {
		return Endpoint{}, "", err
	}
	if err := s.check(ctx, in); err != nil {
		return Endpoint{}, "", err
	}
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	sealed, err := s.Sealer.Seal(secret)
	if err != nil {
		return Endpoint{}, "", err
	}
	var e Endpoint
	err = audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		// Creations in one program are serialised, so that the count and the URL check below hold.
		if err := lockProgram(ctx, tx, programID); err != nil {
			return audit.Entry{}, err
		}
		var n int
		if err := sqlx.GetContext(ctx, tx, &n, `SELECT count(*) FROM webhook_endpoints WHERE program_id = $1`, programID); err != nil {
			return audit.Entry{}, err
		}
		if n >= MaxEndpoints {
			return audit.Entry{}, invalid("a program has at most %d webhook endpoints", MaxEndpoints)
		}
		if err := uniqueURL(ctx, tx, programID, 0, *in.URL); err != nil {
			return audit.Entry{}, err
		}
		if err := sqlx.GetContext(ctx, tx, &e, `INSERT INTO webhook_endpoints (program_id, url, event_types, description,
			secret_sealed, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING `+endpointColumns,
			programID, *in.URL, types(in.EventTypes), in.Description, sealed, r.Now); err != nil {
			return audit.Entry{}, err
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_endpoint.create", Target: audit.ProgramTarget(programID),
			Detail: map[string]any{"endpoint_id": e.ID, "url": e.URL}}, nil
	})
	return e, secret, err
}

// lockProgram serialises the changes of a program's endpoints that must see each other: creations (the
// count) and URLs (each once per program).
func lockProgram(ctx context.Context, tx *sqlx.Tx, programID int64) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('reftrack.webhooks', $1))`, programID)
	return err
}

// uniqueURL refuses url when another endpoint of the program than except has it (under lockProgram).
func uniqueURL(ctx context.Context, tx *sqlx.Tx, programID, except int64, url string) error {
	var id int64
	err := sqlx.GetContext(ctx, tx, &id, `SELECT id FROM webhook_endpoints WHERE program_id = $1 AND url = $2 AND id <> $3
		ORDER BY id LIMIT 1`, programID, url, except)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return &DuplicateURLError{ID: id, URL: url}
}

// List is the program's endpoints, oldest first (at most MaxEndpoints).
func (s *Store) List(ctx context.Context, accountID, programID int64) ([]Endpoint, error) {
	if err := access(ctx, s.DB, accountID, programID); err != nil {
		return nil, err
	}
	out := []Endpoint{}
	err := sqlx.SelectContext(ctx, s.DB, &out, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE program_id = $1 ORDER BY id`, programID)
	return out, err
}

// Get is one endpoint.
func (s *Store) Get(ctx context.Context, accountID, id int64) (Endpoint, error) {
	return endpointAccess(ctx, s.DB, accountID, id)
}

// Update changes an endpoint's url, event types, description or enabled. Enabling a disabled endpoint
// forgets why it was disabled and how long it had been failing; its deliveries still pending go out.
func (s *Store) Update(ctx context.Context, r Request, id int64, in EndpointInput) (Endpoint, error) {
	e, err := endpointAccess(ctx, s.DB, r.AccountID, id)
	if err != nil {
		return Endpoint{}, err
	}
	if err := s.check(ctx, in); err != nil {
		return Endpoint{}, err
	}
	set := []string{"updated_at = $2"}
	args := []any{id, r.Now}
	add := func(col string, v any) {
		args = append(args, v)
		set = append(set, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if in.URL != nil {
		add("url", *in.URL)
	}
	if in.EventTypes != nil {
		add("event_types", types(in.EventTypes))
	}
	if in.Description != nil {
		add("description", *in.Description)
	}
	if in.Enabled != nil {
		add("enabled", *in.Enabled)
		if *in.Enabled {
			// The events of the time it was disabled are for recover only (webhooks_fan_out).
			set = append(set, "disabled_reason = NULL", "failing_since = NULL",
				"enabled_since = CASE WHEN enabled THEN enabled_since ELSE now() END")
		} else {
			set = append(set, "disabled_reason = COALESCE(disabled_reason, 'disabled by a member')")
		}
	}
	err = audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		if in.URL != nil {
			if err := lockProgram(ctx, tx, e.ProgramID); err != nil {
				return audit.Entry{}, err
			}
			if err := uniqueURL(ctx, tx, e.ProgramID, id, *in.URL); err != nil {
				return audit.Entry{}, err
			}
		}
		err := sqlx.GetContext(ctx, tx, &e, `UPDATE webhook_endpoints SET `+strings.Join(set, ", ")+` WHERE id = $1
			RETURNING `+endpointColumns, args...)
		if errors.Is(err, sql.ErrNoRows) {
			return audit.Entry{}, ErrEndpointNotFound
		}
		if err != nil {
			return audit.Entry{}, err
		}
		if !e.Enabled {
			if err := failPending(ctx, tx, id, r.Now); err != nil {
				return audit.Entry{}, err
			}
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_endpoint.update", Target: audit.ProgramTarget(e.ProgramID),
			Detail: map[string]any{"endpoint_id": e.ID, "url": e.URL, "enabled": e.Enabled}}, nil
	})
	return e, err
}

// Delete removes an endpoint with its deliveries and their attempts (the program's events stay, for its
// other endpoints).
func (s *Store) Delete(ctx context.Context, r Request, id int64) error {
	e, err := endpointAccess(ctx, s.DB, r.AccountID, id)
	if err != nil {
		return err
	}
	return audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, id)
		if err != nil {
			return audit.Entry{}, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return audit.Entry{}, ErrEndpointNotFound
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_endpoint.delete", Target: audit.ProgramTarget(e.ProgramID),
			Detail: map[string]any{"endpoint_id": e.ID, "url": e.URL}}, nil
	})
}

// RotateSecret gives the endpoint a new secret, returned this once; the previous one signs deliveries too
// for RotationOverlap, so that a receiver can switch without losing one.
func (s *Store) RotateSecret(ctx context.Context, r Request, id int64) (Endpoint, string, error) {
	e, err := endpointAccess(ctx, s.DB, r.AccountID, id)
	if err != nil {
		return Endpoint{}, "", err
	}
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	sealed, err := s.Sealer.Seal(secret)
	if err != nil {
		return Endpoint{}, "", err
	}
	err = audit.Do(ctx, s.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		err := sqlx.GetContext(ctx, tx, &e, `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed,
			previous_secret_until = $3, secret_sealed = $2, updated_at = $4 WHERE id = $1 RETURNING `+endpointColumns,
			id, sealed, r.Now.Add(RotationOverlap), r.Now)
		if errors.Is(err, sql.ErrNoRows) {
			return audit.Entry{}, ErrEndpointNotFound
		}
		if err != nil {
			return audit.Entry{}, err
		}
		return audit.Entry{At: r.Now, Actor: r.actor(), Action: "webhook_endpoint.rotate_secret",
			Target: audit.ProgramTarget(e.ProgramID), Detail: map[string]any{"endpoint_id": e.ID}}, nil
	})
	return e, secret, err
}
