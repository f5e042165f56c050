package pgcall_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }

type row struct {
	ID    int64      `pg:"p_id"`
	Count int32      `pg:"p_count"`
	Name  string     `pg:"p_name"`
	Note  *string    `pg:"p_note"`
	Ref   *int64     `pg:"p_ref"`
	OK    bool       `pg:"p_ok"`
	Maybe *bool      `pg:"p_maybe"`
	Hash  []byte     `pg:"p_hash"`
	At    time.Time  `pg:"p_at"`
	Until *time.Time `pg:"p_until"`
}

type fixed struct {
	Limit int64   `pg:"p_limit"`
	Label *string `pg:"p_label"`
}

// echo returns its inputs as rows, so a round trip shows what the function received.
const echo = `CREATE FUNCTION echo(p_id bigint[], p_count integer[], p_name text[], p_note text[], p_ref bigint[],
    p_ok boolean[], p_maybe boolean[], p_hash bytea[], p_at timestamptz[], p_until timestamptz[], p_limit bigint, p_label text)
RETURNS TABLE (ord bigint, id bigint, count integer, name text, note text, ref bigint, ok boolean, maybe boolean,
    hash bytea, at timestamptz, until timestamptz, lim bigint, label text)
LANGUAGE sql AS $$
    SELECT t.ord, t.id, t.count, t.name, t.note, t.ref, t.ok, t.maybe, t.hash, t.at, t.until, p_limit, p_label
    FROM unnest(p_id, p_count, p_name, p_note, p_ref, p_ok, p_maybe, p_hash, p_at, p_until)
        WITH ORDINALITY AS t(id, count, name, note, ref, ok, maybe, hash, at, until, ord)
$$`

type out struct {
	Ord   int64      `db:"ord"`
	ID    int64      `db:"id"`
	Count int32      `db:"count"`
	Name  string     `db:"name"`
	Note  *string    `db:"note"`
	Ref   *int64     `db:"ref"`
	OK    bool       `db:"ok"`
	Maybe *bool      `db:"maybe"`
	Hash  []byte     `db:"hash"`
	At    time.Time  `db:"at"`
	Until *time.Time `db:"until"`
	Limit int64      `db:"lim"`
	Label *string    `db:"label"`
}

func ptr[T any](v T) *T { return &v }

// Every value arrives as sent, through the server's own pool (binary parameters) and a plain one:
// texts that look like NULL, empty or full of quoting characters, NULLs of every type, bytes and times.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.Empty(t)
	if _, err := d.Exec(echo); err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(ctx, d.URL, db.PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })

	at := time.Date(2026, 11, 25, 10, 31, 2, 123456000, time.UTC)
	rows := []row{
		{ID: 1, Count: -3, Name: "plain", Note: ptr("a note"), Ref: ptr(int64(7)), OK: true, Maybe: ptr(false), Hash: []byte{0, 1, 0xfe}, At: at, Until: ptr(at.Add(time.Hour))},
		{ID: -9_000_000_000_000, Name: "", Note: ptr("NULL"), Hash: nil, At: at.Add(-time.Minute)},
		{ID: 3, Name: `quote " backslash \ comma , braces {} space  é ✓`, Note: ptr(""), Maybe: ptr(true), Hash: []byte{}, At: at},
		{ID: 4, Name: "null", Note: nil, Ref: nil},
	}
	call := pgcall.New[row, fixed]("echo")
	for name, q := range map[string]interface {
		SelectContext(context.Context, any, string, ...any) error
	}{"server pool": pool, "plain pool": d.DB} {
		for _, fx := range []fixed{{Limit: 5, Label: ptr("lbl")}, {Limit: 0, Label: nil}} {
			var got []out
			if err := q.SelectContext(ctx, &got, call.Query(), call.Args(rows, fx)...); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var want []out
			for i, r := range rows {
				want = append(want, out{Ord: int64(i + 1), ID: r.ID, Count: r.Count, Name: r.Name, Note: r.Note, Ref: r.Ref, OK: r.OK,
					Maybe: r.Maybe, Hash: r.Hash, At: r.At, Until: r.Until, Limit: fx.Limit, Label: fx.Label})
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("%s, fixed %+v: round trip (-sent +received):\n%s", name, fx, diff)
			}
		}
	}
	// No rows: empty arrays.
	var none []out
	if err := pool.SelectContext(ctx, &none, call.Query(), call.Args(nil, fixed{})...); err != nil || len(none) != 0 {
		t.Errorf("no rows: %v, %v", none, err)
	}
}

func TestQueryAndSignature(t *testing.T) {
	t.Parallel()
	call := pgcall.New[row, fixed]("echo")
	if want := "SELECT * FROM echo(p_id => $1::bigint[], p_count => $2::integer[], p_name => $3::text[], p_note => $4::text[], " +
		"p_ref => $5::bigint[], p_ok => $6::boolean[], p_maybe => $7::boolean[], p_hash => $8::bytea[], p_at => $9::timestamp with time zone[], " +
		"p_until => $10::timestamp with time zone[], p_limit => $11::bigint, p_label => $12::text)"; call.Query() != want {
		t.Errorf("Query =\n%s\nwant\n%s", call.Query(), want)
	}
	if want := "p_id bigint[], p_count integer[], p_name text[], p_note text[], p_ref bigint[], p_ok boolean[], p_maybe boolean[], " +
		"p_hash bytea[], p_at timestamp with time zone[], p_until timestamp with time zone[], p_limit bigint, p_label text"; call.Signature() != want {
		t.Errorf("Signature = %s", call.Signature())
	}
}

// Check compares the call with the function as the database has it: names, types and order.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.Empty(t)
	if _, err := d.Exec(echo); err != nil {
		t.Fatal(err)
	}
	if err := pgcall.Check(ctx, d, pgcall.New[row, fixed]("echo")); err != nil {
		t.Errorf("Check of the matching call: %v", err)
	}
	type swapped struct {
		Count int32 `pg:"p_count"`
		ID    int64 `pg:"p_id"`
	}
	type renamed struct {
		ID int64 `pg:"p_ident"`
	}
	type retyped struct {
		ID string `pg:"p_id"`
	}
	for name, err := range map[string]error{
		"order":   pgcall.Check(ctx, d, pgcall.New[swapped, pgcall.None]("echo")),
		"name":    pgcall.Check(ctx, d, pgcall.New[renamed, pgcall.None]("echo")),
		"type":    pgcall.Check(ctx, d, pgcall.New[retyped, pgcall.None]("echo")),
		"missing": pgcall.Check(ctx, d, pgcall.New[row, fixed]("no_such_function")),
	} {
		if err == nil {
			t.Errorf("Check with a different %s = nil, want an error", name)
		}
	}
	if _, err := d.Exec(`CREATE FUNCTION echo(p_id bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT p_id $$`); err != nil {
		t.Fatal(err)
	}
	if err := pgcall.Check(ctx, d, pgcall.New[row, fixed]("echo")); err == nil || !strings.Contains(err.Error(), "overloads") {
		t.Errorf("Check with two overloads = %v", err)
	}
}

// A call that cannot be sent is refused when it is built.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	type untagged struct{ ID int64 }
	type unsupported struct {
		F float64 `pg:"p_f"`
	}
	type twice struct {
		A int64 `pg:"p_a"`
		B int64 `pg:"p_a"`
	}
	for name, build := range map[string]func(){
		"untagged":    func() { pgcall.New[untagged, pgcall.None]("f") },
		"unsupported": func() { pgcall.New[unsupported, pgcall.None]("f") },
		"twice":       func() { pgcall.New[twice, pgcall.None]("f") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			build()
		}()
	}
}

func BenchmarkArgs(b *testing.B) {
	call := pgcall.New[row, fixed]("echo")
	rows := make([]row, 128)
	for i := range rows {
		rows[i] = row{ID: int64(i), Name: "https://shop.example/landing?aff=abc", Note: ptr("Mozilla/5.0 (X11; Linux x86_64)"), Hash: make([]byte, 32), At: time.Now()}
	}
	for b.Loop() {
		call.Args(rows, fixed{})
	}
}
