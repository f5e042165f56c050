package dbtest

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/lib/pq"
)

// NestedPlans runs query on its own connection to d with auto_explain logging the plan of every
// statement it runs, the statements inside database functions included, and returns those plans (text
// format, without costs). A function's statements are planned as the server plans them (generic plans
// where the function asks for them), which EXPLAIN of the call alone does not show.
func NestedPlans(t testing.TB, d *Database, query string, args ...any) []string {
	t.Helper()
	ctx := context.Background()
	base, err := pq.NewConnector(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		plans []string
	)
	db := sql.OpenDB(pq.ConnectorWithNoticeHandler(base, func(n *pq.Error) {
		if _, plan, ok := strings.Cut(n.Message, "plan:\n"); ok {
			mu.Lock()
			plans = append(plans, plan)
			mu.Unlock()
		}
	}))
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = notice`,
		`SET client_min_messages = notice`} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	mu.Lock()
	defer mu.Unlock()
	return plans
}
