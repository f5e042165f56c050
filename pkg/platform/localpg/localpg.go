// Package localpg runs a project-local PostgreSQL server from the installed binaries, for `make run` on a
// machine where none is running. Its data lives in a directory of the project (.data/postgres). Tools and
// tests that need a cluster of their own (make chaos, pkg/testkit/replica's primary and hot standby) start
// theirs in a temporary directory on a free port.
package localpg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// InstallHint says how to get PostgreSQL when neither a server nor binaries are found.
const InstallHint = `No PostgreSQL server answered and no PostgreSQL binaries (initdb, pg_ctl) were found.
Install PostgreSQL, then run the command again:
  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y postgresql
  Fedora:         sudo dnf install -y postgresql-server
  macOS:          brew install postgresql@15
or point DATABASE_URL at a PostgreSQL server you already have.`

// ErrNoBinaries means initdb and pg_ctl were not found.
var ErrNoBinaries = errors.New("postgresql binaries not found")

// Cluster is a local server.
type Cluster struct {
	Dir     string // holds data/ and postgres.log
	Port    int
	bin     string
	cred    *syscall.Credential // run as this user (when we are root)
	started bool
}

// FindBinaries returns the directory holding initdb and pg_ctl: the newest /usr/lib/postgresql/*/bin
// (Debian's layout), else the one on PATH.
func FindBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil && filepath.Dir(initdb) == filepath.Dir(pgctl) {
		return filepath.Dir(initdb), nil
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Answers reports whether something accepts TCP connections on 127.0.0.1:port.
func Answers(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// Options adjust the server StartWith starts.
type Options struct {
	// Settings are server settings given on its command line (-c name=value), over postgresql.conf:
	// fsync=off for a throwaway test cluster, say. Names and values must not contain spaces or quotes.
	Settings map[string]string
}

// Start makes sure a server with its data in dir listens on 127.0.0.1:port, creating the cluster on
// first use. When a server already answers on port it is used as is. PostgreSQL refuses to run as root,
// so as root the server runs as the "postgres" OS user.
func Start(ctx context.Context, dir string, port int, logf func(string, ...any)) (*Cluster, error) {
	return StartWith(ctx, dir, port, Options{}, logf)
}

// StartWith is Start with options. A data directory made by BaseBackup starts as the standby of the
// cluster it was copied from.
func StartWith(ctx context.Context, dir string, port int, opts Options, logf func(string, ...any)) (*Cluster, error) {
	c := &Cluster{Dir: dir, Port: port}
	if Answers(port) {
		logf("using the PostgreSQL already listening on 127.0.0.1:%d", port)
		return c, nil
	}
	settings, err := commandLine(opts.Settings)
	if err != nil {
		return nil, err
	}
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	c.bin = bin
	if c.cred, err = ServerUser(); err != nil {
		return nil, err
	}
	if err := c.makeDir(dir); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		logf("creating a local PostgreSQL cluster in %s", data)
		if out, err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "-N"); err != nil {
			return nil, fmt.Errorf("initdb: %w\n%s", err, out)
		}
	}
	logf("starting a local PostgreSQL on 127.0.0.1:%d (log: %s)", port, filepath.Join(dir, "postgres.log"))
	args := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=''%s", port, settings)
	if out, err := c.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "postgres.log"), "-w", "-t", "60", "-o", args, "start"); err != nil {
		return nil, fmt.Errorf("pg_ctl start: %w\n%s", err, out)
	}
	c.started = true
	return c, nil
}

// commandLine is settings as postgres command-line options, in name order (each with a leading space).
func commandLine(settings map[string]string) (string, error) {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		value := settings[name]
		if strings.ContainsAny(name+value, " \t\n'\"\\") || name == "" {
			return "", fmt.Errorf("localpg: setting %q=%q: names and values must not contain spaces or quotes", name, value)
		}
		fmt.Fprintf(&b, " -c %s=%s", name, value)
	}
	return b.String(), nil
}

// ServerUser is who the server runs as: nil (this process's user), or the "postgres" OS user when this
// process is root, since PostgreSQL refuses to run as root.
func ServerUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New(`PostgreSQL refuses to run as root and there is no "postgres" OS user to run it as; run as an unprivileged user or create one`)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// makeDir creates dir for the server's user.
func (c *Cluster) makeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if c.cred != nil {
		return os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid))
	}
	return nil
}

// BaseBackup copies the running cluster into dir/data with pg_basebackup -R, so that StartWith on dir
// (another port) runs a hot standby streaming from this cluster. The cluster must be one Start started,
// with the default replication settings (wal_level replica, a free WAL sender) and initdb's trust
// authentication, which admits replication connections from 127.0.0.1.
func (c *Cluster) BaseBackup(ctx context.Context, dir string) error {
	if !c.started {
		return errors.New("localpg: BaseBackup copies a cluster Start started")
	}
	if err := c.makeDir(dir); err != nil {
		return err
	}
	out, err := c.run(ctx, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres",
		"-D", filepath.Join(dir, "data"), "-R", "-X", "stream", "-c", "fast", "--no-sync")
	if err != nil {
		return fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	return nil
}

// URL is a DSN for database name on this server.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=5", c.Port, name)
}

// Started reports whether Start started the server (so Stop will stop it).
func (c *Cluster) Started() bool { return c.started }

// Stop stops the server if Start started it.
func (c *Cluster) Stop() error {
	if !c.started {
		return nil
	}
	out, err := c.run(context.Background(), "pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "fast", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	c.started = false
	return nil
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil && c.cred != nil && errors.Is(err, os.ErrPermission) {
		err = fmt.Errorf(`%w (the server runs as the "postgres" OS user, which must be able to enter %s and every directory above it)`, err, c.Dir)
	}
	return out, err
}

// FreePort returns a TCP port free on 127.0.0.1 right now.
func FreePort() (int, error) {
	p, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// FreePorts returns n distinct TCP ports free on 127.0.0.1 right now (each held until all are found, so
// none repeats), for servers started next: a cluster of one's own, its pooler, its balancer.
func FreePorts(n int) ([]int, error) {
	var (
		out []int
		lns []net.Listener
	)
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
