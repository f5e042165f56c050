package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// wrkCommon numbers wrk's threads and prints the figures loadgen reads.
const wrkCommon = `
local tid = 0
function setup(thread) thread:set("id", tid); tid = tid + 1 end
function init(args) counter = 0 end
function done(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("LOADGEN %d %d %d %d %d %d\n", summary.requests, bad, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

// clickScript sends clicks, each from a visitor of its own (thread and counter make an address in
// 11.0.0.0/8, apart from the Go load's 10.0.0.0/8), with a few browser User-Agents.
func clickScript(affiliateURL string) string {
	quoted := make([]string, len(userAgents))
	for i, ua := range userAgents {
		quoted[i] = fmt.Sprintf("%q", ua)
	}
	body := fmt.Sprintf(`{"affiliate_url":%q,"page_url":%q}`, affiliateURL, affiliateURL)
	return wrkCommon + fmt.Sprintf(`
local agents = {%s}
local body = %q
function request()
  counter = counter + 1
  local ip = string.format("11.%%d.%%d.%%d", id, math.floor(counter / 250) %% 250, counter %% 250 + 1)
  return wrk.format("POST", "/api/v1/track/click",
    {["Content-Type"] = "application/json", ["User-Agent"] = agents[counter %% #agents + 1], ["X-Forwarded-For"] = ip}, body)
end
`, strings.Join(quoted, ", "), body)
}

// saleScript sends sales with fresh transaction ids (wrk-<thread>-<counter>) over the sellers' keys and
// customers, as the Go sale load does.
func saleScript(sellers []seller) string {
	var keys, customers []string
	for _, s := range sellers {
		keys = append(keys, fmt.Sprintf("%q", "Bearer "+s.key))
		cs := make([]string, len(s.customers))
		for i, c := range s.customers {
			cs[i] = fmt.Sprintf("%q", c)
		}
		customers = append(customers, "{"+strings.Join(cs, ", ")+"}")
	}
	return wrkCommon + fmt.Sprintf(`
local keys = {%s}
local customers = {%s}
function request()
  counter = counter + 1
  local i = counter * 2 + id
  local p = i %% #keys + 1
  local cs = customers[p]
  local body = string.format('{"transaction_id":"wrk-%%d-%%d","amount_cents":%%d,"customer_key":"%%s"}',
    id, counter, 1000 + i %% 5000, cs[math.floor(i / #keys) %% #cs + 1])
  return wrk.format("POST", "/api/v1/track/sale",
    {["Content-Type"] = "application/json", ["Authorization"] = keys[p]}, body)
end
`, strings.Join(keys, ", "), strings.Join(customers, ", "))
}

// runWrk runs wrk with script at c connections (two threads) for d.
func runWrk(base, script string, c int, d time.Duration) (*stats, error) {
	dir, err := os.MkdirTemp("", "reftrack-wrk")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path, err := tempFile(dir, "load.lua", script)
	if err != nil {
		return nil, err
	}
	threads := min(c, 2)
	out, err := exec.Command("wrk", "-t", fmt.Sprint(threads), "-c", fmt.Sprint(c), "-d", fmt.Sprintf("%ds", int(d.Seconds())),
		"-s", path, base).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	var reqs, bad, micros, p50, p99, pmax int64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "LOADGEN ") {
			fmt.Sscan(strings.TrimPrefix(line, "LOADGEN "), &reqs, &bad, &micros, &p50, &p99, &pmax)
		}
	}
	if reqs == 0 {
		return nil, fmt.Errorf("wrk printed no figures:\n%s", out)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "loadgen: wrk saw %d errors of %d requests\n", bad, reqs)
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return &stats{took: us(micros), ok: int(reqs - bad), errors: int(bad), fixed: []time.Duration{us(p50), us(p99), us(pmax)}}, nil
}
