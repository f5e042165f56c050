// Command cluster is `make cluster`: reftrack's production topology on this machine (three reftrackd
// replicas behind HAProxy, PgBouncer in transaction pooling, Redis, a PostgreSQL cluster of its own; see
// pkg/platform/localcluster), with a seeded program, until Ctrl-C. It prints the one URL to use.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/reftrack/reftrack/pkg/platform/localcluster"
)

func main() {
	var o localcluster.Options
	flag.StringVar(&o.Reftrackd, "reftrackd", "bin/reftrackd", "reftrackd binary the replicas run")
	flag.IntVar(&o.Replicas, "replicas", 3, "reftrackd replicas behind the balancer")
	flag.StringVar(&o.Dir, "dir", "", "directory for data, configuration and logs (default: a temporary one, removed at exit)")
	flag.Parse()
	o.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "cluster: "+f+"\n", a...) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o localcluster.Options) error {
	c, err := localcluster.Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "cluster: stop:", err)
		}
	}()
	seeded, err := c.Reftrackd(ctx, "seed", "--name", "Cluster demo")
	if err != nil {
		return fmt.Errorf("seed: %w\n%s", err, seeded)
	}
	fmt.Printf(`
reftrack is running at  %s

  balancer   HAProxy on %s, checking each replica's /livez every second
  replicas   %s
  database   PgBouncer (transaction pooling) %s -> PostgreSQL %s
  limits     Redis %s
  files      %s (configuration and logs)

A program to try it with (reftrackd seed):
%s
Ctrl-C stops everything.
`, c.URL, c.URL, replicaList(c), c.PooledURL, c.DirectURL, c.RedisURL, c.Dir, seeded)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "cluster: stopping")
	return nil
}

func replicaList(c *localcluster.Cluster) string {
	s := ""
	for i, r := range c.Replicas {
		if i > 0 {
			s += ", "
		}
		s += r.Name + " " + r.Addr
	}
	return s
}
