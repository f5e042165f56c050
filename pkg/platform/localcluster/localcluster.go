// Package localcluster runs reftrack's production topology on one machine, from installed binaries:
// a PostgreSQL cluster of its own (never a shared server), PgBouncer in transaction pooling in front of
// it, Redis for the shared rate limits, reftrackd replicas reaching the database only through the
// pooler, and HAProxy balancing them on /livez. `make cluster` serves it; `make test-cluster` tests
// through it. The settings here are the ones docs/deploy.md recommends.
package localcluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/lib/pq" // the "postgres" driver

	"github.com/reftrack/reftrack/pkg/platform/localpg"
)

// Programs the cluster runs besides reftrackd and PostgreSQL.
var programs = []string{"pgbouncer", "haproxy", "redis-server"}

// InstallHint says how to get what Missing reports.
const InstallHint = "sudo apt-get install -y pgbouncer haproxy redis-server postgresql"

// Missing lists the programs the cluster needs that are not installed.
func Missing() []string {
	var out []string
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			out = append(out, p)
		}
	}
	if _, err := localpg.FindBinaries(); err != nil {
		out = append(out, "postgresql (initdb, pg_ctl)")
	}
	return out
}

// Options configure a cluster.
type Options struct {
	// Reftrackd is the server binary the replicas run.
	Reftrackd string
	// Replicas is how many reftrackd processes serve behind the balancer (default 3).
	Replicas int
	// Dir holds every process's data, configuration and log; empty: a temporary directory, removed by Stop.
	Dir string
	// Logf reports progress (nil: silent).
	Logf func(string, ...any)
}

// Cluster is a running cluster.
type Cluster struct {
	// URL is the balancer's address: the one URL clients use.
	URL string
	// DirectURL reaches PostgreSQL itself (migrations, checks); PooledURL goes through PgBouncer (what
	// the replicas use).
	DirectURL, PooledURL string
	// RedisURL is the Redis the replicas share.
	RedisURL string
	Replicas []*Replica
	Dir      string

	opts    Options
	pg      *localpg.Cluster
	ownDir  bool
	mu      sync.Mutex
	daemons []*exec.Cmd
}

// Replica is one reftrackd process behind the balancer.
type Replica struct {
	Name string
	// Addr is its own address (host:port), which the balancer checks and forwards to.
	Addr string
	// Log is its log file.
	Log string

	bin string
	env []string
	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when the current process has been waited for.
	exited chan struct{}
}

// Start starts the whole cluster and migrates its database; on an error everything started is stopped.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if m := Missing(); len(m) > 0 {
		return nil, fmt.Errorf("the cluster needs %s (install: %s)", strings.Join(m, ", "), InstallHint)
	}
	if o.Replicas <= 0 {
		o.Replicas = 3
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	c = &Cluster{opts: o, Dir: o.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "reftrack-cluster"); err != nil {
			return nil, err
		}
		c.ownDir = true
	}
	if err := os.Chmod(c.Dir, 0o755); err != nil { // the postgres OS user enters it
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
			c = nil
		}
	}()
	ports, err := localpg.FreePorts(4 + o.Replicas)
	if err != nil {
		return nil, err
	}
	pgPort, poolPort, redisPort, lbPort := ports[0], ports[1], ports[2], ports[3]

	c.pg, err = localpg.Start(ctx, filepath.Join(c.Dir, "postgres"), pgPort, o.Logf)
	if err != nil {
		return nil, err
	}
	if !c.pg.Started() {
		return nil, fmt.Errorf("something already listens on 127.0.0.1:%d; the cluster only uses a PostgreSQL of its own", pgPort)
	}
	c.DirectURL = c.pg.URL("reftrack")
	if err := prepareDatabase(ctx, c.pg.URL("postgres")); err != nil {
		return nil, err
	}
	if err := c.startPgBouncer(ctx, pgPort, poolPort); err != nil {
		return nil, err
	}
	c.PooledURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/reftrack?sslmode=disable&connect_timeout=5", poolPort)
	if err := c.startRedis(ctx, redisPort); err != nil {
		return nil, err
	}
	c.RedisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", redisPort)
	c.URL = fmt.Sprintf("http://127.0.0.1:%d", lbPort)

	// A deploy's migration job: once, on the direct connection, before any replica starts.
	if out, err := c.Reftrackd(ctx, "migrate", "up"); err != nil {
		return nil, fmt.Errorf("reftrackd migrate up: %w\n%s", err, out)
	}
	for i := range o.Replicas {
		r := &Replica{Name: fmt.Sprintf("r%d", i+1), Addr: fmt.Sprintf("127.0.0.1:%d", ports[4+i]), bin: o.Reftrackd}
		r.Log = filepath.Join(c.Dir, "reftrackd-"+r.Name+".log")
		r.env = append(os.Environ(), c.ReplicaEnv(r.Addr)...)
		c.Replicas = append(c.Replicas, r)
	}
	for _, r := range c.Replicas {
		if err := r.Start(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.startHAProxy(ctx, lbPort); err != nil {
		return nil, err
	}
	o.Logf("cluster up: %s (%d replicas), PgBouncer %s, PostgreSQL %s, Redis %s, files in %s",
		c.URL, len(c.Replicas), c.PooledURL, c.DirectURL, c.RedisURL, c.Dir)
	return c, nil
}

// Reftrackd runs a reftrackd command (migrate, seed, …) with a replica's database settings and returns
// its output.
func (c *Cluster) Reftrackd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.opts.Reftrackd, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+c.PooledURL, "MIGRATE_DATABASE_URL="+c.DirectURL, "BASE_URL="+c.URL)
	return cmd.CombinedOutput()
}

// ReplicaEnv is the environment of a replica listening on addr: the pooled database, the direct one for
// migrations, the shared Redis, and the balancer as its public address and trusted proxy.
func (c *Cluster) ReplicaEnv(addr string) []string {
	return []string{
		"DATABASE_URL=" + c.PooledURL, "MIGRATE_DATABASE_URL=" + c.DirectURL, "REDIS_URL=" + c.RedisURL,
		"LISTEN_ADDR=" + addr, "BASE_URL=" + c.URL, "TRUSTED_PROXIES=127.0.0.0/8", "LOG_LEVEL=info",
	}
}

// prepareDatabase creates the database and gives it the statement and lock timeouts: PgBouncer 1.18
// refuses startup parameters it does not know, so the servers' own (DB_STATEMENT_TIMEOUT,
// DB_LOCK_TIMEOUT) are ignored by the pooler (ignore_startup_parameters) and set here instead.
func prepareDatabase(ctx context.Context, adminURL string) error {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	for _, q := range []string{`CREATE DATABASE reftrack`, `ALTER DATABASE reftrack SET statement_timeout = '5s'`,
		`ALTER DATABASE reftrack SET lock_timeout = '3s'`} {
		if _, err := admin.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// PgBouncerConfig is the pooler's configuration: transaction pooling, the settings docs/deploy.md shows.
func PgBouncerConfig(dir string, pgPort, port int) string {
	return fmt.Sprintf(`[databases]
reftrack = host=127.0.0.1 port=%d dbname=reftrack user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
; every replica's pool (DB_MAX_OPEN_CONNS, default 20) shares these server connections
max_client_conn = 1000
default_pool_size = 20
reserve_pool_size = 5
; lib/pq sends extra_float_digits; the server's timeouts are set on the database instead
ignore_startup_parameters = extra_float_digits,statement_timeout,lock_timeout
server_lifetime = 3600
; a request waits at most 5 s for a server connection (then 503 with Retry-After), not the default 120 s
query_wait_timeout = 5
log_connections = 0
log_disconnections = 0
`, pgPort, port, filepath.Join(dir, "userlist.txt"))
}

func (c *Cluster) startPgBouncer(ctx context.Context, pgPort, port int) error {
	dir := filepath.Join(c.Dir, "pgbouncer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ini := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(`"postgres" ""`+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(ini, []byte(PgBouncerConfig(dir, pgPort, port)), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("pgbouncer", ini)
	cred, err := localpg.ServerUser() // PgBouncer, like PostgreSQL, refuses to run as root
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := c.daemon(cmd, filepath.Join(dir, "pgbouncer.log")); err != nil {
		return fmt.Errorf("pgbouncer: %w", err)
	}
	return waitTCP(ctx, port, "pgbouncer", filepath.Join(dir, "pgbouncer.log"))
}

func (c *Cluster) startRedis(ctx context.Context, port int) error {
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log := filepath.Join(c.Dir, "redis.log")
	if err := c.daemon(cmd, log); err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	return waitTCP(ctx, port, "redis-server", log)
}

// HAProxyConfig balances the replicas: health checks on /livez every second, out after 3 failures (a
// draining replica is out within DRAIN_DELAY's default 5s), back after 2 successes; a request whose
// connection failed, or whose server closed it without a response, goes to another replica.
func HAProxyConfig(port int, replicas []*Replica) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    maxconn 4096

defaults
    mode http
    option httplog
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 10s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response

frontend reftrack
    bind 127.0.0.1:%d
    option forwardfor
    default_backend reftrackd

backend reftrackd
    balance roundrobin
    option httpchk GET /livez
    http-check expect status 200
    default-server inter 1s fall 3 rise 2
`, port)
	for _, r := range replicas {
		fmt.Fprintf(&b, "    server %s %s check\n", r.Name, r.Addr)
	}
	return b.String()
}

func (c *Cluster) startHAProxy(ctx context.Context, port int) error {
	cfg := filepath.Join(c.Dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(HAProxyConfig(port, c.Replicas)), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("haproxy", "-db", "-f", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log := filepath.Join(c.Dir, "haproxy.log")
	if err := c.daemon(cmd, log); err != nil {
		return fmt.Errorf("haproxy: %w", err)
	}
	if err := waitTCP(ctx, port, "haproxy", log); err != nil {
		return err
	}
	// Ready once the balancer forwards: every replica passed its first check.
	return waitHTTP(ctx, c.URL+"/livez", "the balancer")
}

// docReplicas are the replicas docs/deploy.md shows the balancer's configuration with.
func docReplicas() []*Replica {
	return []*Replica{{Name: "r1", Addr: "10.0.1.11:8080"}, {Name: "r2", Addr: "10.0.1.12:8080"}, {Name: "r3", Addr: "10.0.1.13:8080"}}
}

// daemon starts cmd with its output to log and keeps it for Stop.
func (c *Cluster) daemon(cmd *exec.Cmd, log string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Start()
	f.Close()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.daemons = append(c.daemons, cmd)
	c.mu.Unlock()
	return nil
}

// Stop stops the replicas, the balancer, the pooler, Redis and PostgreSQL, and removes a temporary
// directory.
func (c *Cluster) Stop() error {
	var errs []error
	for _, r := range c.Replicas {
		errs = append(errs, r.Kill())
	}
	c.mu.Lock()
	daemons := c.daemons
	c.daemons = nil
	c.mu.Unlock()
	for i := len(daemons) - 1; i >= 0; i-- {
		d := daemons[i]
		_ = syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		_ = d.Wait()
	}
	if c.pg != nil {
		errs = append(errs, c.pg.Stop())
	}
	if c.ownDir {
		errs = append(errs, os.RemoveAll(c.Dir))
	}
	return errors.Join(errs...)
}

// Start starts the replica and waits until it answers /livez.
func (r *Replica) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return fmt.Errorf("replica %s already runs", r.Name)
	}
	f, err := os.OpenFile(r.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.bin, "serve")
	cmd.Env = r.env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	f.Close()
	if err != nil {
		return fmt.Errorf("replica %s: %w", r.Name, err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	exited := r.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := waitHTTP(ctx, "http://"+r.Addr+"/livez", "replica "+r.Name+" (log: "+r.Log+")"); err != nil {
		return err
	}
	return nil
}

// Bin is the reftrackd binary the replica runs.
func (r *Replica) Bin() string { return r.bin }

// Kill stops the replica with SIGKILL, as a crash would: nothing is drained.
func (r *Replica) Kill() error { return r.stop(syscall.SIGKILL) }

// Terminate sends SIGTERM and waits for the replica to drain and exit.
func (r *Replica) Terminate() error { return r.stop(syscall.SIGTERM) }

func (r *Replica) stop(sig syscall.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return nil
	}
	if err := r.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-r.exited
	r.cmd = nil
	return nil
}

// startTimeout bounds the wait for a process to answer.
const startTimeout = 30 * time.Second

// waitTCP waits until something accepts connections on port.
func waitTCP(ctx context.Context, port int, what, log string) error {
	return poll(ctx, what+" (log: "+log+")", func() bool {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
}

// waitHTTP waits until url answers 200.
func waitHTTP(ctx context.Context, url, what string) error {
	client := &http.Client{Timeout: time.Second}
	return poll(ctx, what, func() bool {
		res, err := client.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// poll asks ready every 50 ms until it says yes, ctx ends or startTimeout passes: a process's start is
// only observable by asking.
func poll(ctx context.Context, what string, ready func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !ready() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not start within %s", what, startTimeout)
		case <-t.C:
		}
	}
	return nil
}
