// Command reftrackd is the reftrack server: `serve` (the default) runs the HTTP API; `migrate`, `seed`
// and `dev` are the operator and developer commands around it.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/pkg/platform/config"
)

// Garbage-collector defaults for a request server, unless GOGC or GOMEMLIMIT are set: collect when the
// heap has grown 400% (not Go's 100%), and collect harder as the heap nears 64 MiB. Requests allocate
// briefly and keep little (the live heap is about 10 MiB), so this cut the CPU per click by about a
// third and keeps the process under 100 MiB at peak load (docs/performance.md).
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 64 << 20
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "reftrackd:", err)
		os.Exit(1)
	}
}

// env is what every command receives: output streams and the environment.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// onListen, when set, learns the address the server listens on (tests use port 0).
	onListen func(addr string)
	// onPprof, when set, learns the profiler's address (PPROF_ADDR).
	onPprof func(addr string)
	// onHistoryPass, when set, learns that a background pass over the click history ended.
	onHistoryPass func()
	// drainWait waits out the drain delay after SIGTERM (tests replace the timer).
	drainWait func(time.Duration)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return runEnv(ctx, args, &env{stdout: stdout, stderr: stderr, getenv: getenv, drainWait: time.Sleep})
}

func runEnv(ctx context.Context, args []string, e *env) error {
	root := &cobra.Command{
		Use:   "reftrackd",
		Short: "reftrack server: referral tracking API",
		Long: `reftrackd serves the reftrack API. Without a command it runs "serve".
Configuration comes from environment variables (see docs/configuration.md).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.serve(cmd.Context())
		},
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.AddCommand(e.serveCmd(), e.migrateCmd(), e.seedCmd(), e.devCmd(), e.keysCmd(), e.accountsCmd(), e.auditCmd())
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// config reads the configuration; defaults applies command-specific defaults for unset variables.
func (e *env) config(defaults map[string]string) (config.Config, error) {
	return config.FromEnv(func(k string) string {
		if v := e.getenv(k); v != "" {
			return v
		}
		return defaults[k]
	})
}

func (e *env) logger(cfg config.Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(e.stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(e.stderr, opts))
}
