package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

var tables = []string{
	"accounts", "workspaces", "workspace_members", "programs", "api_keys", "partners", "partner_programs",
	"referral_links", "clicks", "customers", "leads", "sales", "commissions", "refunds", "login_sessions",
	"login_tokens", "processor_connections", "processor_events", "audit_log",
}

func publicTables(t *testing.T, d *sqlx.DB) map[string]bool {
	t.Helper()
	var names []string
	if err := d.Select(&names, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`); err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func TestUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.Empty(t)
	latest, err := db.LatestVersion()
	if err != nil || latest < 1 {
		t.Fatalf("LatestVersion = %d, %v", latest, err)
	}

	if err := db.CheckCurrent(ctx, d.DB.DB); !errors.Is(err, db.ErrSchemaNotCurrent) {
		t.Fatalf("CheckCurrent on an empty database = %v, want ErrSchemaNotCurrent", err)
	}
	for round := 1; round <= 2; round++ {
		if err := db.MigrateUp(ctx, d.DB.DB); err != nil {
			t.Fatalf("round %d: up: %v", round, err)
		}
		v, dirty, err := db.Version(ctx, d.DB.DB)
		if err != nil || dirty || v != latest {
			t.Fatalf("round %d: Version = %d, dirty %v, %v; want %d", round, v, dirty, err, latest)
		}
		if err := db.CheckCurrent(ctx, d.DB.DB); err != nil {
			t.Fatalf("round %d: CheckCurrent after up: %v", round, err)
		}
		got := publicTables(t, d.DB)
		for _, name := range tables {
			if !got[name] {
				t.Errorf("round %d: table %s missing after up", round, name)
			}
		}
		if round == 2 {
			break
		}
		if err := db.MigrateDown(ctx, d.DB.DB, 0); err != nil {
			t.Fatalf("down: %v", err)
		}
		got = publicTables(t, d.DB)
		for name := range got {
			if name != "schema_migrations" {
				t.Errorf("table %s left after down", name)
			}
		}
		if v, _, err := db.Version(ctx, d.DB.DB); err != nil || v != 0 {
			t.Errorf("Version after down = %d, %v; want 0", v, err)
		}
	}
	// The pool stays usable: migrations run on a connection of their own.
	if err := d.PingContext(ctx); err != nil {
		t.Errorf("pool closed by the migrator: %v", err)
	}
}

func TestMigrateDownSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	latest, _ := db.LatestVersion()
	if err := db.MigrateDown(ctx, d.DB.DB, 1); err != nil {
		t.Fatal(err)
	}
	v, _, err := db.Version(ctx, d.DB.DB)
	if err != nil {
		t.Fatal(err)
	}
	if v >= latest {
		t.Errorf("Version after one step down = %d, want below %d", v, latest)
	}
	if err := db.CheckCurrent(ctx, d.DB.DB); !errors.Is(err, db.ErrSchemaNotCurrent) {
		t.Errorf("CheckCurrent = %v, want ErrSchemaNotCurrent", err)
	}
}

// fixture inserts a workspace, two programs, a partner with a junction to the first, and returns ids.
type fixture struct{ ws, p1, p2, partner, pp, link, click, customer int64 }

func newFixture(t *testing.T, d *sqlx.DB) fixture {
	t.Helper()
	var f fixture
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Get(&f.ws, `INSERT INTO workspaces (name) VALUES ('w') RETURNING id`))
	must(d.Get(&f.p1, `INSERT INTO programs (workspace_id, name, domain, slug, commission_type, commission_rate)
		VALUES ($1, 'p1', 'a.example', 'p1', 'percent', 20) RETURNING id`, f.ws))
	must(d.Get(&f.p2, `INSERT INTO programs (workspace_id, name, domain, slug, commission_type, commission_rate)
		VALUES ($1, 'p2', 'b.example', 'p2', 'fixed', 25) RETURNING id`, f.ws))
	must(d.Get(&f.partner, `INSERT INTO partners (workspace_id, name, email) VALUES ($1, 'Pat', 'pat@example.com') RETURNING id`, f.ws))
	must(d.Get(&f.pp, `INSERT INTO partner_programs (partner_id, program_id) VALUES ($1, $2) RETURNING id`, f.partner, f.p1))
	must(d.Get(&f.link, `INSERT INTO referral_links (short_link, partner_id, program_id) VALUES ('abc', $1, $2) RETURNING id`, f.partner, f.p1))
	must(d.Get(&f.click, `INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url)
		VALUES (to_char(now() AT TIME ZONE 'UTC', 'YYMM') || 'VLdvuE52RWYhrO8NdnO0mA', $1, $2, $3, 'https://a.example/?aff=abc')
		RETURNING id`, f.p1, f.link, f.partner))
	must(d.Get(&f.customer, `INSERT INTO customers (program_id, customer_key, click_ref, partner_id, partner_program_id, status)
		VALUES ($1, 'cust-1', $2, $3, $4, 'lead') RETURNING id`, f.p1, f.click, f.partner, f.pp))
	return f
}

func TestConstraints(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	f := newFixture(t, d.DB)

	insertSale := func(program int64, txn string) error {
		_, err := d.Exec(`INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date)
			VALUES ($1, $2, $3, $4, 100, 'USD', 'api', now())`, program, f.customer, f.partner, txn)
		return err
	}
	tests := []struct {
		name       string
		run        func() error
		constraint string // "" = must succeed
	}{
		{"first sale", func() error { return insertSale(f.p1, "txn-1") }, ""},
		{"the same transaction id in another program", func() error { return insertSale(f.p2, "txn-1") }, ""},
		{"the same transaction id in the same program", func() error { return insertSale(f.p1, "txn-1") }, "sales_program_transaction_key"},
		{"processor refund ids are unique per program", func() error {
			q := `INSERT INTO refunds (sale_id, program_id, reason, amount_cents, processor_refund_id, source)
				SELECT id, program_id, 'refund', 1, 're_1', 'webhook' FROM sales WHERE program_id = $1 AND processor_event_id = 'txn-1'`
			if _, err := d.Exec(q, f.p1); err != nil {
				return err
			}
			if _, err := d.Exec(q, f.p2); err != nil { // the same processor refund at another program
				return err
			}
			_, err := d.Exec(q, f.p1)
			return err
		}, "refunds_program_processor_refund_key"},
		{"customer_key again in the same program", func() error {
			_, err := d.Exec(`INSERT INTO customers (program_id, customer_key) VALUES ($1, 'cust-1')`, f.p1)
			return err
		}, "customers_program_id_customer_key_key"},
		{"customer_key again in another program", func() error {
			_, err := d.Exec(`INSERT INTO customers (program_id, customer_key) VALUES ($1, 'cust-1')`, f.p2)
			return err
		}, ""},
		{"short_link is unique", func() error {
			_, err := d.Exec(`INSERT INTO referral_links (short_link, partner_id, program_id) VALUES ('abc', $1, $2)`, f.partner, f.p2)
			return err
		}, "referral_links_short_link_key"},
		{"one active API key per program", func() error {
			_, err := d.Exec(`INSERT INTO api_keys (program_id, key_hash, last4) VALUES ($1, sha256('a'), 'aaaa')`, f.p1)
			if err != nil {
				return err
			}
			_, err = d.Exec(`INSERT INTO api_keys (program_id, key_hash, last4) VALUES ($1, sha256('b'), 'bbbb')`, f.p1)
			return err
		}, "api_keys_one_active_per_program"},
		{"one settled lead per customer", func() error {
			q := `INSERT INTO leads (program_id, customer_id, status, source, settled_at) VALUES ($1, $2, 'settled', 'server', now())`
			if _, err := d.Exec(q, f.p1, f.customer); err != nil {
				return err
			}
			_, err := d.Exec(q, f.p1, f.customer)
			return err
		}, "leads_one_settled_per_customer"},
		{"processor event ids are unique per program", func() error {
			q := `INSERT INTO processor_events (provider, event_id, program_id, event_type, outcome) VALUES ('stripe', 'evt_1', $1, 'invoice.paid', 'recorded')`
			if _, err := d.Exec(q, f.p1); err != nil {
				return err
			}
			if _, err := d.Exec(q, f.p2); err != nil { // the same event at another program's endpoint
				return err
			}
			_, err := d.Exec(q, f.p1)
			return err
		}, "processor_events_program_event_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if tt.constraint == "" {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			got, ok := db.IsUniqueViolation(err)
			if !ok || got != tt.constraint {
				t.Fatalf("err = %v (unique violation of %q: %v), want violation of %s", err, got, ok, tt.constraint)
			}
		})
	}
}

func TestChecksAndForeignKeys(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	f := newFixture(t, d.DB)
	bad := map[string]string{
		"not a currency code": `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date)
			VALUES ` + "($1, $2, $3, 'x1', 100, 'gbp', 'api', now())",
		"non-positive amount": `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date)
			VALUES ` + "($1, $2, $3, 'x2', 0, 'USD', 'api', now())",
		"unknown customer": `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date)
			VALUES ` + "($1, $2 + 1000, $3, 'x3', 100, 'USD', 'api', now())",
		// A commission is available on its sale's date plus the hold, always said (ledger_create).
		"commission without available_on": `WITH s AS (INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id,
				amount_cents, currency, source, sale_date) VALUES ($1, $2, $3, 'x4', 100, 'USD', 'api', now()) RETURNING id)
			INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency)
			SELECT s.id, $1, $3, pp.id, 20, 'USD' FROM s, partner_programs pp WHERE pp.partner_id = $3 AND pp.program_id = $1`,
	}
	for name, q := range bad {
		if _, err := d.Exec(q, f.p1, f.customer, f.partner); err == nil {
			t.Errorf("%s: insert succeeded", name)
		}
	}
	for name, q := range map[string]string{
		"lead_auth":        `UPDATE programs SET lead_auth = 'anyone' WHERE id = $1`,
		"commission_rate":  `UPDATE programs SET commission_rate = 0 WHERE id = $1`,
		"commission_type":  `UPDATE programs SET commission_type = 'tiered' WHERE id = $1`,
		"customer status":  `UPDATE customers SET status = 'churned' WHERE program_id = $1`,
		"cookie window":    `UPDATE programs SET cookie_window_days = 0 WHERE id = $1`,
		"enrollment":       `UPDATE partner_programs SET status = 'paused' WHERE program_id = $1`,
		"default currency": `UPDATE programs SET currencies = '{EUR}' WHERE id = $1`, // USD, the default, no longer listed
		"no currency":      `UPDATE programs SET currencies = '{}', default_currency = 'x' WHERE id = $1`,
	} {
		if _, err := d.Exec(q, f.p1); err == nil {
			t.Errorf("%s: invalid update succeeded", name)
		}
	}
}

// Every click_id carries its click's month (pkg/clicks.NewClickID): the partition's, which is also the
// row id's. One without a month, or of another month, is refused, so that UNIQUE (click_id, click_month)
// keeps click_ids unique across the months.
func TestClickIDsCarryTheirMonth(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	f := newFixture(t, d.DB) // its click's id carries this month
	for name, clickID := range map[string]string{
		"no month":           "c1",
		"another month":      "0001VLdvuE52RWYhrO8NdnO0mA",
		"a month, too short": "2601short",
	} {
		_, err := d.Exec(`INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url) VALUES ($1, $2, $3, $4, 'x')`,
			clickID, f.p1, f.link, f.partner)
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || pqErr.Code != "23514" || pqErr.Constraint != "clicks_click_id_month" {
			t.Errorf("%s (%q): %v, want a violation of clicks_click_id_month", name, clickID, err)
		}
	}
	if n := 0; d.Get(&n, `SELECT count(*) FROM clicks`) != nil || n != 1 {
		t.Errorf("%d clicks stored, want the fixture's only", n)
	}
}
