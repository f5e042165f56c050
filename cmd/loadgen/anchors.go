package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"regexp"
)

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)

// pgbenchInit creates pgbench's own tables (scale 16: 16 branches, 1.6 million accounts) for the
// TPC-B-like anchor.
func pgbenchInit(ctx context.Context, dsn string) error {
	out, err := exec.CommandContext(ctx, "pgbench", "-i", "-q", "-s", "16", dsn).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgbench -i: %w\n%s", err, out)
	}
	return nil
}

// pgbenchTPCB runs pgbench's built-in TPC-B-like transaction (3 updates, a select and an insert, one
// commit) with 16 clients: the sale's and the refund's anchor.
func pgbenchTPCB(ctx context.Context, dsn string, d interface{ Seconds() float64 }) (float64, error) {
	return runPgbench(ctx, "-n", "-c", "16", "-j", "2", "-T", fmt.Sprint(int(d.Seconds())), dsn)
}

// pgbenchInsert runs single-row INSERTs into a table shaped like clicks (its indexes and checks included)
// with 64 clients: the click's and the lead's anchor. Its click_id begins with the month, as the server's
// do (clicks_click_id_month refuses one without).
func pgbenchInsert(ctx context.Context, dsn string, d interface{ Seconds() float64 }) (float64, error) {
	pool, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if _, err := pool.ExecContext(ctx, `DROP TABLE IF EXISTS bench_insert; CREATE TABLE bench_insert (LIKE clicks INCLUDING ALL)`); err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "reftrack-pgbench")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	script, err := tempFile(dir, "insert.sql", `\set r random(1, 1000000000)
INSERT INTO bench_insert (click_id, program_id, link_id, partner_id, affiliate_url, user_agent, visitor_hash, device_type, browser_name)
VALUES (to_char(now() AT TIME ZONE 'UTC', 'YYMM') || left(md5(:r::text || clock_timestamp()::text), 22), 1, 1, 1, 'https://shop.example.com/?aff=x', 'Mozilla/5.0', sha256(:r::text::bytea), 'desktop', 'Chrome');
`)
	if err != nil {
		return 0, err
	}
	tps, err := runPgbench(ctx, "-n", "-c", "64", "-j", "2", "-T", fmt.Sprint(int(d.Seconds())), "-f", script, dsn)
	_, _ = pool.ExecContext(ctx, `DROP TABLE bench_insert`)
	return tps, err
}

func runPgbench(ctx context.Context, args ...string) (float64, error) {
	out, err := exec.CommandContext(ctx, "pgbench", args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %w\n%s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	var tps float64
	fmt.Sscan(string(m[1]), &tps)
	return tps, nil
}
