// Package replica runs a PostgreSQL primary and a hot standby streaming from it, both the test's own
// (temporary directories, free ports, the installed binaries through pkg/platform/localpg; never the
// shared server of TEST_DATABASE_URL), for tests of what a read replica serves. The primary's database
// is created and migrated before the standby is copied from it with pg_basebackup -R. Both clusters
// stop, and their directories go, when the test ends.
//
// Nothing here sleeps for a guessed time: it polls the servers' own answers (pg_stat_replication, the
// standby's replay position and pause state) until they say what it waits for.
package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/platform/localpg"
	"github.com/reftrack/reftrack/pkg/testkit/tools"
)

// Database is the name of the migrated database on the primary (and so on the standby).
const Database = "reftrack"

// Throwaway clusters need no durability: without fsync a test's writes cost no disk flushes.
var settings = map[string]string{"fsync": "off", "full_page_writes": "off"}

// waitLimit bounds every wait; pollEvery is how often a wait asks again.
const (
	waitLimit = 30 * time.Second
	pollEvery = 2 * time.Millisecond
)

// Pair is a primary and its hot standby.
type Pair struct {
	// Primary and Replica are pools (db.Open, as the server opens them) on Database on each server.
	Primary, Replica *sqlx.DB
	// PrimaryURL and ReplicaURL connect to Database on each server.
	PrimaryURL, ReplicaURL string
	t                      testing.TB
}

// Start starts a migrated primary and a hot standby that has replayed everything the primary holds.
// Without the PostgreSQL binaries (initdb, pg_ctl, pg_basebackup) the test is skipped, or fails when
// REFTRACK_REQUIRE_TOOLS is set (make test).
func Start(t testing.TB) *Pair {
	t.Helper()
	bin, err := localpg.FindBinaries()
	if err == nil {
		if _, statErr := os.Stat(filepath.Join(bin, "pg_basebackup")); statErr != nil {
			err = fmt.Errorf("no pg_basebackup beside initdb in %s", bin)
		}
	}
	if err != nil {
		tools.Missing(t, fmt.Sprintf("a primary and a hot standby need the PostgreSQL binaries (apt-get install postgresql): %v", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	root := t.TempDir()
	// As root the servers run as the "postgres" OS user, which must be able to enter the directories.
	for _, d := range []string{root, filepath.Dir(root)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	primary := startCluster(ctx, t, filepath.Join(root, "primary"))
	admin, err := sqlx.Open("postgres", primary.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(Database))
	admin.Close()
	if err != nil {
		t.Fatalf("replica: create the database: %v", err)
	}
	p := &Pair{PrimaryURL: primary.URL(Database), t: t}
	p.Primary = open(ctx, t, p.PrimaryURL)
	if err := db.MigrateUp(ctx, p.Primary.DB); err != nil {
		t.Fatalf("replica: migrate the primary: %v", err)
	}

	if err := primary.BaseBackup(ctx, filepath.Join(root, "standby")); err != nil {
		t.Fatalf("replica: %v", err)
	}
	standby := startCluster(ctx, t, filepath.Join(root, "standby"))
	p.ReplicaURL = standby.URL(Database)
	p.Replica = open(ctx, t, p.ReplicaURL)
	var inRecovery bool
	if err := p.Replica.GetContext(ctx, &inRecovery, `SELECT pg_is_in_recovery()`); err != nil || !inRecovery {
		t.Fatalf("replica: the standby is not in recovery (%v)", err)
	}
	p.wait(p.Primary, "the standby streaming from the primary",
		`SELECT EXISTS (SELECT 1 FROM pg_stat_replication WHERE state = 'streaming')`)
	p.Sync()
	return p
}

// startCluster starts a cluster in dir (a new one, or the standby's copy) on a free port, stopped when
// the test ends.
//
// A port found free is let go before the server binds it, so another test's server can take it first: then
// a server we did not start answers there (never used), or ours cannot bind. That is the port's race, not
// the test's: the cluster starts again on another port.
func startCluster(ctx context.Context, t testing.TB, dir string) *localpg.Cluster {
	t.Helper()
	return startOn(ctx, t, dir, localpg.FreePort)
}

// startOn is startCluster on the ports free gives.
func startOn(ctx context.Context, t testing.TB, dir string, free func() (int, error)) *localpg.Cluster {
	t.Helper()
	var taken error
	for range 5 {
		port, err := free()
		if err != nil {
			t.Fatal(err)
		}
		c, err := localpg.StartWith(ctx, dir, port, localpg.Options{Settings: settings}, t.Logf)
		switch {
		case err == nil && !c.Started():
			taken = fmt.Errorf("port %d was taken by another server", port)
			continue
		case err != nil && portTaken(dir):
			taken = fmt.Errorf("port %d was taken before the server bound it: %w", port, err)
			continue
		case err != nil:
			t.Fatalf("replica: %v", err)
		}
		t.Cleanup(func() {
			if err := c.Stop(); err != nil {
				t.Errorf("replica: %v", err)
			}
		})
		return c
	}
	t.Fatalf("replica: five ports in turn were taken: %v", taken)
	return nil
}

// portTaken reports whether the server in dir failed to start because its port was in use (its log says
// so).
func portTaken(dir string) bool {
	log, err := os.ReadFile(filepath.Join(dir, "postgres.log"))
	return err == nil && bytes.Contains(log, []byte("Address already in use"))
}

// open opens a pool as the server does, closed when the test ends (before its cluster stops).
func open(ctx context.Context, t testing.TB, url string) *sqlx.DB {
	t.Helper()
	pool, err := db.Open(ctx, url, db.PoolOptions{MaxOpenConns: 8})
	if err != nil {
		t.Fatalf("replica: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// Sync waits until the standby has replayed everything committed on the primary so far: the primary's
// WAL flush position, which every commit has reached when it returns.
func (p *Pair) Sync() {
	p.t.Helper()
	var lsn string
	if err := p.Primary.Get(&lsn, `SELECT pg_current_wal_flush_lsn()::text`); err != nil {
		p.t.Fatalf("replica: read the primary's WAL position: %v", err)
	}
	p.WaitReplayed(lsn)
}

// WaitReplayed waits until the standby has replayed the WAL up to lsn (such as "0/3016038").
func (p *Pair) WaitReplayed(lsn string) {
	p.t.Helper()
	p.wait(p.Replica, "the standby replaying up to "+lsn, `SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, lsn)
}

// Pause stops the standby's replay (pg_wal_replay_pause) and waits until it has stopped: from then on
// it answers as of the moment it paused, whatever the primary commits, until Resume.
func (p *Pair) Pause() {
	p.t.Helper()
	if _, err := p.Replica.Exec(`SELECT pg_wal_replay_pause()`); err != nil {
		p.t.Fatalf("replica: pause replay: %v", err)
	}
	p.wait(p.Replica, "the standby's replay paused", `SELECT pg_get_wal_replay_pause_state() = 'paused'`)
}

// Resume lets the standby replay again; Sync then waits until it has caught up.
func (p *Pair) Resume() {
	p.t.Helper()
	if _, err := p.Replica.Exec(`SELECT pg_wal_replay_resume()`); err != nil {
		p.t.Fatalf("replica: resume replay: %v", err)
	}
}

// wait asks q the boolean query until it answers true; an error or waitLimit fails the test.
func (p *Pair) wait(q *sqlx.DB, what, query string, args ...any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		var done bool
		err := q.GetContext(ctx, &done, query, args...)
		switch {
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			p.t.Fatalf("replica: %s did not happen within %s", what, waitLimit)
		case err != nil:
			p.t.Fatalf("replica: waiting for %s: %v", what, err)
		case done:
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("replica: %s did not happen within %s", what, waitLimit)
		case <-tick.C:
		}
	}
}
