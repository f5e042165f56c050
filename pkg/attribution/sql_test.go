package attribution_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The sale's statement (pkg/sales/sql/sales_record.sql) calls these functions by their parameters'
// names; these calls hold the names and types to what the functions declare.
var (
	createConverted = pgcall.New[convertedRow, pgcall.None]("attribution_create_converted")
	lockUnchanged   = pgcall.New[lockRow, pgcall.None]("attribution_lock_unchanged")
	convert         = pgcall.New[convertRow, pgcall.None]("attribution_convert")
)

// convertedRow is one customer for attribution_create_converted to make; a nil key binds none.
type convertedRow struct {
	Program        int64     `pg:"p_program"`
	Key            *string   `pg:"p_key"`
	ClickRef       int64     `pg:"p_click_ref"`
	Partner        int64     `pg:"p_partner"`
	PartnerProgram int64     `pg:"p_partner_program"`
	Test           bool      `pg:"p_test"`
	At             time.Time `pg:"p_at"`
}

type lockRow struct {
	ID      *int64  `pg:"p_id"`
	Version *string `pg:"p_version"`
}

type convertRow struct {
	ID int64     `pg:"p_id"`
	At time.Time `pg:"p_at"`
}

func TestSaleFunctionsTakeTheirCallersInputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	for _, err := range []error{
		pgcall.Check(ctx, d.DB, createConverted),
		pgcall.Check(ctx, d.DB, lockUnchanged),
		pgcall.Check(ctx, d.DB, convert),
	} {
		if err != nil {
			t.Error(err)
		}
	}
}

// saleFixture is two brands' programs, with their partners' relationships and clicks on their links, for
// the sale's functions.
type saleFixture struct {
	t            *testing.T
	d            *dbtest.Database
	brand, other seed.Result
	brandPP      int64
	otherPP      int64
	rec          *clicks.Recorder
	visitors     int
}

func newSaleFixture(t *testing.T) *saleFixture {
	t.Helper()
	ctx := context.Background()
	w := &saleFixture{t: t, d: dbtest.New(t)}
	var err error
	if w.brand, err = seed.Run(ctx, w.d.DB, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	if w.other, err = seed.Run(ctx, w.d.DB, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		s  seed.Result
		pp *int64
	}{{w.brand, &w.brandPP}, {w.other, &w.otherPP}} {
		if err := w.d.Get(r.pp, `SELECT id FROM partner_programs WHERE partner_id = $1 AND program_id = $2`,
			r.s.PartnerID, r.s.ProgramID); err != nil {
			t.Fatal(err)
		}
	}
	w.rec = clicks.NewRecorder(w.d.DB, slog.New(slog.NewTextHandler(io.Discard, nil)), 1, 8, nil)
	t.Cleanup(w.rec.Close)
	return w
}

// click is a new click's row id on the program's link.
func (w *saleFixture) click(r seed.Result) int64 {
	w.t.Helper()
	w.visitors++
	c, err := w.rec.Record(context.Background(), clicks.Input{AffiliateURL: r.AffiliateURL,
		IP: fmt.Sprintf("10.2.0.%d", w.visitors), UserAgent: "ua"})
	if err != nil || !c.Created {
		w.t.Fatalf("click: %+v, %v", c, err)
	}
	return c.ID
}

// customer is a new customer of the brand's program at status lead, keyed key (none when nil).
func (w *saleFixture) customer(key *string) int64 {
	w.t.Helper()
	var id int64
	if err := w.d.Get(&id, `INSERT INTO customers (program_id, customer_key, status, signed_up_at)
		VALUES ($1, $2, 'lead', now()) RETURNING id`, w.brand.ProgramID, key); err != nil {
		w.t.Fatal(err)
	}
	return id
}

func (w *saleFixture) version(id int64) string {
	w.t.Helper()
	var v string
	if err := w.d.Get(&v, `SELECT xmin::text FROM customers WHERE id = $1`, id); err != nil {
		w.t.Fatal(err)
	}
	return v
}

// madeCustomer is a customer as attribution_create_converted answers it.
type madeCustomer struct {
	ID       int64   `db:"id"`
	Program  int64   `db:"program_id"`
	Key      *string `db:"customer_key"`
	ClickRef int64   `db:"click_ref"`
}

// attribution_create_converted, called directly: one converted customer per row, from its click,
// bound to its key when it has one; a key already bound in the program makes nothing.
func TestCreateConvertedFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSaleFixture(t)
	bound := w.customer(new("bound"))
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	keyed := convertedRow{Program: w.brand.ProgramID, Key: new("new"), ClickRef: w.click(w.brand), Partner: w.brand.PartnerID,
		PartnerProgram: w.brandPP, At: at}
	unkeyed := convertedRow{Program: w.brand.ProgramID, ClickRef: w.click(w.brand), Partner: w.brand.PartnerID,
		PartnerProgram: w.brandPP, Test: true, At: at.Add(-time.Minute)}
	taken := convertedRow{Program: w.brand.ProgramID, Key: new("bound"), ClickRef: w.click(w.brand), Partner: w.brand.PartnerID,
		PartnerProgram: w.brandPP, At: at}
	elsewhere := convertedRow{Program: w.other.ProgramID, Key: new("bound"), ClickRef: w.click(w.other), Partner: w.other.PartnerID,
		PartnerProgram: w.otherPP, At: at}

	var got []madeCustomer
	if err := createConverted.Select(ctx, w.d.DB, &got, []convertedRow{keyed, unkeyed, taken, elsewhere}, pgcall.None{}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b madeCustomer) int { return cmp.Compare(a.ID, b.ID) })
	if len(got) != 3 {
		t.Fatalf("made %+v, want 3 customers (the key bound in the brand's program makes nothing)", got)
	}
	for i, want := range []convertedRow{keyed, unkeyed, elsewhere} {
		if g := got[i]; g.Program != want.Program || g.ClickRef != want.ClickRef || (g.Key == nil) != (want.Key == nil) ||
			(g.Key != nil && *g.Key != *want.Key) {
			t.Errorf("customer %d made: %+v, want %+v", i, g, want)
		}
		var st struct {
			Status         string     `db:"status"`
			ConvertedAt    time.Time  `db:"converted_at"`
			SignedUpAt     *time.Time `db:"signed_up_at"`
			Partner        int64      `db:"partner_id"`
			PartnerProgram int64      `db:"partner_program_id"`
			Test           bool       `db:"is_test"`
		}
		if err := w.d.Get(&st, `SELECT status, converted_at, signed_up_at, partner_id, partner_program_id, is_test FROM customers
			WHERE id = $1`, got[i].ID); err != nil {
			t.Fatal(err)
		}
		if st.Status != "converted" || !st.ConvertedAt.Equal(want.At) || st.SignedUpAt != nil || st.Partner != want.Partner ||
			st.PartnerProgram != want.PartnerProgram || st.Test != want.Test {
			t.Errorf("customer %d stored %+v, want converted at %v from %+v", i, st, want.At, want)
		}
	}
	var boundClick *int64
	if err := w.d.Get(&boundClick, `SELECT click_ref FROM customers WHERE id = $1`, bound); err != nil || boundClick != nil {
		t.Errorf("the bound customer's click = %v, %v; want it untouched", boundClick, err)
	}
	if err := createConverted.Select(ctx, w.d.DB, &got, nil, pgcall.None{}); err != nil || len(got) != 0 {
		t.Errorf("no rows: made %+v, %v", got, err)
	}
}

// attribution_lock_unchanged, called directly: it locks and answers the customers still at the version
// given; a changed customer, and a row without a customer (NULL: one the sale makes), are left out.
func TestLockUnchangedFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSaleFixture(t)
	a, b, changed := w.customer(new("a")), w.customer(nil), w.customer(new("changed"))
	va, vb, old := w.version(a), w.version(b), w.version(changed)
	if _, err := w.d.Exec(`UPDATE customers SET email = 'x@example.com' WHERE id = $1`, changed); err != nil {
		t.Fatal(err)
	}
	rows := []lockRow{{ID: &b, Version: &vb}, {ID: &changed, Version: &old}, {}, {ID: &a, Version: &va}, {ID: &a, Version: nil}}
	tx, err := w.d.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // only asks
	var got []struct {
		Locked pq.Int64Array `db:"attribution_lock_unchanged"`
	}
	if err := lockUnchanged.Select(ctx, tx, &got, rows, pgcall.None{}); err != nil {
		t.Fatal(err)
	}
	if want := []int64{min(a, b), max(a, b)}; len(got) != 1 || !slices.Equal([]int64(got[0].Locked), want) {
		t.Fatalf("locked %+v, want %v in id order", got, want)
	}
	// They stay locked until the transaction ends: another may not lock them meanwhile.
	var free []int64
	if err := w.d.Select(&free, `SELECT id FROM customers WHERE id = ANY ($1) ORDER BY id FOR UPDATE SKIP LOCKED`,
		pq.Array([]int64{a, b, changed})); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(free, []int64{changed}) {
		t.Errorf("customers free to lock meanwhile %v, want only the changed one %d", free, changed)
	}
}

// attribution_convert, called directly: each customer becomes converted, dated by its sale unless it
// was converted before.
func TestConvertFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSaleFixture(t)
	lead, earlier := w.customer(new("lead")), w.customer(new("earlier"))
	first := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := w.d.Exec(`UPDATE customers SET status = 'converted', converted_at = $2 WHERE id = $1`, earlier, first); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	if _, err := w.d.ExecContext(ctx, convert.Query(), convert.Args([]convertRow{{ID: lead, At: at}, {ID: earlier, At: at}}, pgcall.None{})...); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]time.Time{lead: at, earlier: first} {
		var st struct {
			Status      string    `db:"status"`
			ConvertedAt time.Time `db:"converted_at"`
		}
		if err := w.d.Get(&st, `SELECT status, converted_at FROM customers WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if st.Status != "converted" || !st.ConvertedAt.Equal(want) {
			t.Errorf("customer %d: %+v, want converted at %v", id, st, want)
		}
	}
}
