// Package leads records sign-ups. A lead arrives in server mode (the brand's backend, with the program
// key) or browser mode (no key). On a server_required program a browser-mode lead is only provisional:
// it is stored against its click, binds no customer_key and settles when a server-mode lead (or a
// payment webhook) for that click arrives. Settled leads move the customer from visitor to lead.
package leads

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Errors, one per documented refusal.
var (
	ErrIdentifierRequired = errors.New("click_id or customer_key is required")
	ErrCustomerNotFound   = errors.New("customer not found")
	ErrOtherProgram       = errors.New("customer does not belong to this program")
	ErrOriginNotAllowed   = errors.New("origin not allowed for this program")
)

// StatusError refuses a lead for a customer already at lead or a later stage.
type StatusError struct{ Status string }

func (e *StatusError) Error() string { return "customer status is " + e.Status }

// Sources of a lead.
const (
	SourceBrowser = "browser"
	SourceServer  = "server"
	SourceWebhook = "webhook"
	SourceCLITest = "cli_test"
)

// Input is one reported lead.
type Input struct {
	// ProgramID is the key's program in server mode; in browser mode the program named by
	// additional_data.program_id, if any (the click's program otherwise).
	ProgramID   int64
	ServerMode  bool
	ClickID     string
	CustomerKey string
	Email       string
	Test        bool
	// Origin is the browser's Origin header in browser mode ("" from servers).
	Origin string
	Source string
}

// Attribution says how a lead was attributed.
type Attribution struct {
	Status    string // attributed, provisional, unattributed
	ClickID   *string
	PartnerID *int64
	ProgramID *int64
}

// Result is the recorded lead.
type Result struct {
	LeadID      *int64
	CustomerKey *string
	Provisional bool
	ProgramID   int64
	Attribution Attribution
}

// Track records a lead per the settlement rules.
func Track(ctx context.Context, db *sqlx.DB, log *slog.Logger, in Input) (Result, error) {
	if in.ClickID == "" && in.CustomerKey == "" {
		return Result{}, ErrIdentifierRequired
	}
	if err := attribution.CheckKey(in.CustomerKey); err != nil {
		return Result{}, err
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	var click *attribution.Click
	if in.ClickID != "" {
		c, err := attribution.FindClick(ctx, tx, in.ClickID)
		switch {
		case err == nil:
			click = &c
		case !errors.Is(err, attribution.ErrClickNotFound):
			return Result{}, err
		}
	}
	programID := in.ProgramID
	switch {
	case in.ServerMode && click != nil && click.ProgramID != programID:
		return Result{}, ErrOtherProgram
	case !in.ServerMode && click != nil:
		programID = click.ProgramID // browser mode: the click decides the program
	case programID == 0:
		return Result{}, ErrCustomerNotFound
	}
	program, err := programs.Get(ctx, tx, programID)
	if errors.Is(err, programs.ErrNotFound) {
		return Result{}, ErrCustomerNotFound
	}
	if err != nil {
		return Result{}, err
	}
	if program.OwnerSuspended {
		// Server mode never gets here (its key is refused); a keyless lead is refused the same way.
		return Result{}, accounts.ErrSuspended
	}
	if !in.ServerMode && in.Origin != "" && !program.AllowsOrigin(in.Origin) {
		return Result{}, ErrOriginNotAllowed
	}

	var res Result
	if !in.ServerMode && program.LeadAuth == programs.LeadAuthServerRequired {
		res, err = provisional(ctx, tx, in, click, programID)
	} else {
		res, err = settle(ctx, tx, in, click, programID)
	}
	if err != nil {
		return Result{}, err
	}
	if err := tx.Commit(); err != nil {
		return Result{}, err
	}
	return res, nil
}

// provisional stores a browser-mode lead on a server_required program against its click. It never
// changes a customer and never reveals state: a repeat, or a lead after settlement, records nothing and
// answers the same.
func provisional(ctx context.Context, tx *sqlx.Tx, in Input, click *attribution.Click, programID int64) (Result, error) {
	res := Result{Provisional: true, ProgramID: programID, Attribution: Attribution{Status: "provisional", ProgramID: &programID}}
	if click == nil {
		// No click to hold the lead: only a known customer_key gets the (empty) provisional answer.
		if _, err := attribution.CustomerByKey(ctx, tx, programID, in.CustomerKey); err != nil {
			if errors.Is(err, attribution.ErrCustomerNotFound) {
				return Result{}, ErrCustomerNotFound
			}
			return Result{}, err
		}
		return res, nil
	}
	res.Attribution.ClickID, res.Attribution.PartnerID = &click.ClickID, &click.PartnerID
	_, err := tx.ExecContext(ctx, `INSERT INTO leads (program_id, click_ref, click_id, customer_key, email, status, source, is_test)
		SELECT $1, $2, $3, $4, $5, 'provisional', $6, $7
		WHERE NOT EXISTS (SELECT 1 FROM leads WHERE click_ref = $2)
		ON CONFLICT (click_ref) WHERE status = 'provisional' DO NOTHING`,
		programID, click.ID, click.ClickID, nullable(in.CustomerKey), nullable(in.Email), SourceBrowser, in.Test || click.IsTest)
	if err != nil {
		return Result{}, fmt.Errorf("record provisional lead: %w", err)
	}
	return res, nil
}

// settle records a settled lead: the customer (found by key, else by click, else made from the click)
// moves from visitor to lead, and a provisional lead of its click becomes the settled one.
func settle(ctx context.Context, tx *sqlx.Tx, in Input, click *attribution.Click, programID int64) (Result, error) {
	cust, err := findOrCreateCustomer(ctx, tx, in, click, programID)
	if err != nil {
		return Result{}, err
	}
	if cust.Status != attribution.StatusVisitor {
		return Result{}, &StatusError{Status: cust.Status}
	}
	test := in.Test || cust.IsTest
	var leadID int64
	if cust.ClickRef != nil {
		err = tx.GetContext(ctx, &leadID, `UPDATE leads SET status = 'settled', settled_at = now(), customer_id = $2,
			customer_key = $3, email = COALESCE($4, email), source = $5, is_test = is_test OR $6
			WHERE click_ref = $1 AND status = 'provisional' RETURNING id`,
			*cust.ClickRef, cust.ID, cust.Key, nullable(in.Email), in.Source, test)
	}
	if cust.ClickRef == nil || err != nil {
		if err != nil && !isNoRows(err) {
			return Result{}, fmt.Errorf("settle provisional lead: %w", err)
		}
		err = tx.GetContext(ctx, &leadID, `INSERT INTO leads (program_id, customer_id, click_ref, click_id, customer_key, email,
			status, source, settled_at, is_test) VALUES ($1, $2, $3, $4, $5, $6, 'settled', $7, now(), $8) RETURNING id`,
			programID, cust.ID, cust.ClickRef, cust.ClickID, cust.Key, nullable(in.Email), in.Source, test)
		if err != nil {
			return Result{}, fmt.Errorf("record lead: %w", err)
		}
	}
	if err := attribution.MarkLead(ctx, tx, cust.ID, in.Email); err != nil {
		return Result{}, err
	}
	if cust.ClickRef != nil {
		if err := clicks.MarkConverted(ctx, tx, *cust.ClickRef); err != nil {
			return Result{}, err
		}
	}
	res := Result{LeadID: &leadID, CustomerKey: cust.Key, ProgramID: programID,
		Attribution: Attribution{Status: "unattributed", ClickID: cust.ClickID, PartnerID: cust.PartnerID, ProgramID: &programID}}
	if cust.PartnerID != nil {
		res.Attribution.Status = "attributed"
	}
	return res, nil
}

// findOrCreateCustomer resolves the lead's customer in the program: by customer_key first (first click
// wins), else the customer of the click, else a new customer made from the click.
func findOrCreateCustomer(ctx context.Context, tx *sqlx.Tx, in Input, click *attribution.Click, programID int64) (attribution.Customer, error) {
	if in.CustomerKey != "" {
		c, err := attribution.CustomerByKey(ctx, tx, programID, in.CustomerKey)
		if err == nil || !errors.Is(err, attribution.ErrCustomerNotFound) {
			return c, err
		}
	}
	if click == nil {
		return attribution.Customer{}, ErrCustomerNotFound
	}
	if in.CustomerKey == "" {
		c, err := attribution.CustomerByClick(ctx, tx, programID, click.ID)
		if err == nil || !errors.Is(err, attribution.ErrCustomerNotFound) {
			return c, err
		}
	}
	return attribution.CreateFromClick(ctx, tx, *click, in.CustomerKey, in.Email, in.Test || click.IsTest)
}

// A sale marks its customer's leads converted through this package's database function leads_convert
// (migration 000010), called by the sale's statement.

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
