package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/testkit/ports"
)

// A READ_DATABASE_URL that does not answer, or names a database without this build's schema, stops
// the server at start with an error naming the variable; one that answers is opened and logged as the
// pool for reads.
func TestServeWithReadDatabaseURL(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)

	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		_, _, err := runCmd(t, map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0",
			"READ_DATABASE_URL": fmt.Sprintf("postgres://postgres@%s/reftrack?sslmode=disable&connect_timeout=5", ports.Refusing(t))}, "serve")
		if err == nil || !strings.Contains(err.Error(), "read replica (READ_DATABASE_URL): connect to database") {
			t.Errorf("err = %v, want a refusal naming READ_DATABASE_URL", err)
		}
	})

	t.Run("no schema", func(t *testing.T) {
		t.Parallel()
		empty := dbtest.Empty(t)
		_, _, err := runCmd(t, map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0", "READ_DATABASE_URL": empty.URL}, "serve")
		if err == nil || !strings.Contains(err.Error(), "read replica (READ_DATABASE_URL): database schema is not current") {
			t.Errorf("err = %v, want a refusal naming READ_DATABASE_URL", err)
		}
	})

	t.Run("answers", func(t *testing.T) {
		t.Parallel()
		// The primary itself stands in for a replica here; pkg/api's replica test uses a real one.
		var logs bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		listening, done := make(chan string, 1), make(chan error, 1)
		vars := map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0", "READ_DATABASE_URL": d.URL}
		e := &env{stdout: &bytes.Buffer{}, stderr: &logs, getenv: func(k string) string { return vars[k] },
			onListen: func(a string) { listening <- a }}
		go func() { done <- runEnv(ctx, []string{"serve"}, e) }()
		select {
		case addr := <-listening:
			waitReady(t, "http://"+addr+"/readyz")
		case err := <-done:
			cancel()
			t.Fatalf("serve exited: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if !strings.Contains(logs.String(), `"msg":"read replica (READ_DATABASE_URL) used for reads`) {
			t.Errorf("no log line for the read pool:\n%s", logs.String())
		}
	})
}
