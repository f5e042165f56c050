package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reftrack/reftrack/pkg/platform/localpg"
)

// server is the reftrackd under test.
type server struct {
	base, pprof string
	cmd         *exec.Cmd
}

func startServer(o options, dsn string) (*server, error) {
	port, err := localpg.FreePort()
	if err != nil {
		return nil, err
	}
	s := &server{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	env := append(os.Environ(), "DATABASE_URL="+dsn, fmt.Sprintf("LISTEN_ADDR=127.0.0.1:%d", port),
		"TRUSTED_PROXIES=127.0.0.0/8", "LOG_LEVEL=warn", "DB_MAX_OPEN_CONNS=32")
	if o.profile != "" {
		pp, err := localpg.FreePort()
		if err != nil {
			return nil, err
		}
		s.pprof = fmt.Sprintf("127.0.0.1:%d", pp)
		env = append(env, "PPROF_ADDR="+s.pprof)
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return nil, err
		}
	}
	s.cmd = exec.Command(o.bin, "serve")
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.bin, err)
	}
	if err := waitHealthy(s.base); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
}

// cpu is the server's CPU time so far (user + system), from /proc.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at its closing parenthesis; utime and
	// stime are fields 14 and 15, in clock ticks of 1/100 s.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// peakRSS is the server's peak resident set size in bytes (VmHWM).
func (s *server) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// profile records a CPU profile of the server into dir/name.pprof while a load of length d runs; the
// returned function waits for it. Without dir it does nothing.
func (s *server) profile(dir, name string, d time.Duration) func() {
	if dir == "" || s.pprof == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		secs := max(int(d.Seconds())-1, 1)
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.pprof, secs))
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen: profile:", err)
			return
		}
		defer res.Body.Close()
		f, err := os.Create(filepath.Join(dir, name+".pprof"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen: profile:", err)
			return
		}
		defer f.Close()
		_, _ = io.Copy(f, res.Body)
	}()
	return func() { <-done }
}

// batchStats are the server's batch metrics for one kind of batch (clicks, leads, sales or refunds).
type batchStats struct{ size, count, seconds float64 }

func (a batchStats) minus(b batchStats) batchStats {
	return batchStats{a.size - b.size, a.count - b.count, a.seconds - b.seconds}
}

var metricLine = regexp.MustCompile(`(?m)^reftrack_(click|lead|sale|refund)_batch_(size_sum|size_count|seconds_sum) ([0-9.e+]+)$`)

// batches reads the batch metrics of route (click, lead, sale or refund) from /metrics.
func (s *server) batches(route string) batchStats {
	var b batchStats
	res, err := http.Get(s.base + "/metrics")
	if err != nil {
		return b
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, m := range metricLine.FindAllSubmatch(body, -1) {
		if string(m[1]) != route {
			continue
		}
		v, _ := strconv.ParseFloat(string(m[3]), 64)
		switch string(m[2]) {
		case "size_sum":
			b.size = v
		case "size_count":
			b.count = v
		case "seconds_sum":
			b.seconds = v
		}
	}
	return b
}

func waitHealthy(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond) // polling a process we started; there is nothing to await
	}
	return errors.New("reftrackd did not become ready")
}
