package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuSplit is CPU time (user + system) used by each group of processes on the machine: the server, the
// database, the load generators, and everything else.
type cpuSplit map[string]time.Duration

// cpuGroups names the group of a process by its command name.
func cpuGroup(comm string) string {
	switch {
	case comm == "reftrackd":
		return "reftrackd"
	case comm == "postgres" || comm == "postmaster":
		return "postgres"
	case comm == "wrk" || comm == "loadgen" || comm == "pgbench":
		return "load"
	default:
		return "other"
	}
}

// sampleCPU reads every process's CPU time so far from /proc. Processes that ended between two samples
// are missed (the loads' processes live through them).
func sampleCPU() cpuSplit {
	out := cpuSplit{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+2:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		out[cpuGroup(s[open+1:close])] += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return out
}

func (a cpuSplit) minus(b cpuSplit) cpuSplit {
	out := cpuSplit{}
	for k, v := range a {
		out[k] = v - b[k]
	}
	return out
}
