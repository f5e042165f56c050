package readiness

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The gates without the database: each is a function of the facts.

func ptr[T any](v T) *T { return &v }

var seen = ptr(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC))

// ready is a program whose every gate passes.
func ready() facts {
	return facts{Name: "Shop", Domain: "shop.example.com", Origins: 1, Partners: 1, ActiveLinks: 1, CommissionOK: true,
		LastClick: seen, LastLead: seen, LastSale: seen, ServerLeads: 1, DNSToken: "tok"}
}

func with(change func(*facts)) facts {
	f := ready()
	change(&f)
	return f
}

func TestProfileEconomicsPayoutGates(t *testing.T) {
	t.Parallel()
	pass := Gate{Status: Pass}
	fail := func(action string) Gate { return Gate{Status: Fail, NextAction: &action} }
	for _, tc := range []struct {
		name string
		gate func(facts) Gate
		f    facts
		want Gate
	}{
		{"profile: name and domain", profileGate, ready(), pass},
		{"profile: no name", profileGate, with(func(f *facts) { f.Name = "" }), fail("Give the program a name and your site's domain.")},
		{"profile: no domain", profileGate, with(func(f *facts) { f.Domain = "" }), fail("Give the program a name and your site's domain.")},
		{"economics: a paying commission", economicsGate, ready(), pass},
		{"economics: a commission that pays nothing", economicsGate, with(func(f *facts) { f.CommissionOK = false }), fail("Set the commission type and rate.")},
		{"payout: a real partner with a link", payoutGate, ready(), pass},
		{"payout: no real partner", payoutGate, with(func(f *facts) { f.Partners = 0 }), fail("Add a partner and give them a referral link.")},
		{"payout: no enabled link of a real partner", payoutGate, with(func(f *facts) { f.ActiveLinks = 0 }), fail("Add a partner and give them a referral link.")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.gate(tc.f), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestChecks(t *testing.T) {
	t.Parallel()
	done := func(id string) Check { return Check{ID: id, Status: Pass, Hint: "Done."} }
	allDone := []Check{done("tracker_click_seen"), done("server_lead_seen"), done("sale_seen"), done("allowed_origins_set"),
		done("processor_connected"), done("processor_charges_seen"), done("domain_verified")}
	none := []Check{
		{ID: "tracker_click_seen", Status: Fail, Hint: "Install the tracker tag on every page and open your site through a referral link (?aff=…)."},
		{ID: "server_lead_seen", Status: Fail, Hint: "Report sign-ups from your backend: POST /api/v1/track/lead with the program key, the click_id and your customer_key."},
		{ID: "sale_seen", Status: Fail, Hint: "Report payments from your backend (POST /api/v1/track/sale) or connect your payment processor."},
		{ID: "allowed_origins_set", Status: Fail, Hint: "List your site's origin (such as https://www.example.com) in the program's allowed origins."},
		{ID: "processor_connected", Status: Unknown, Hint: "Optional: connect your payment processor so payments are attributed without code."},
		{ID: "processor_charges_seen", Status: Unknown, Hint: "Optional: once the processor is connected, a first live payment it reports proves its charges reach reftrack."},
		{ID: "domain_verified", Status: Unknown, Hint: "Optional: prove the domain is yours with a DNS TXT record _reftrack.shop.example.com whose value is reftrack-verification=tok."},
	}
	for _, tc := range []struct {
		name string
		f    facts
		want []Check
	}{
		{"everything done", with(func(f *facts) { f.Processor, f.Charges, f.DNSVerified = true, true, true }), allDone},
		{"nothing done: required checks fail, optional ones are unknown", facts{Domain: "shop.example.com", DNSToken: "tok"}, none},
		{"a browser lead is not a server lead", with(func(f *facts) { f.Processor, f.Charges, f.DNSVerified, f.ServerLeads = true, true, true, 0 }),
			[]Check{allDone[0], none[1], allDone[2], allDone[3], allDone[4], allDone[5], allDone[6]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(checks(tc.f), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestTrackingGate(t *testing.T) {
	t.Parallel()
	hint := func(id string) string {
		for _, c := range checks(facts{}) {
			if c.ID == id {
				return c.Hint
			}
		}
		t.Fatalf("no check %s", id)
		return ""
	}
	for _, tc := range []struct {
		name string
		f    facts
		want Gate
	}{
		{"origins, a click and a server lead", ready(), Gate{Status: Pass}},
		{"no allowed origin", with(func(f *facts) { f.Origins = 0 }), Gate{Status: Fail, NextAction: ptr(hint("allowed_origins_set"))}},
		{"no click", with(func(f *facts) { f.LastClick = nil }), Gate{Status: Fail, NextAction: ptr(hint("tracker_click_seen"))}},
		{"no server lead", with(func(f *facts) { f.ServerLeads = 0 }), Gate{Status: Fail, NextAction: ptr(hint("server_lead_seen"))}},
		// The first failing check in the report's order gives the action: the click before the origins.
		{"neither origins nor a click", with(func(f *facts) { f.Origins, f.LastClick = 0, nil }), Gate{Status: Fail, NextAction: ptr(hint("tracker_click_seen"))}},
		{"no sale, no processor, no DNS: not the tracking gate's", with(func(f *facts) { f.LastSale = nil }), Gate{Status: Pass}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(trackingGate(checks(tc.f)), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestLiveGate(t *testing.T) {
	t.Parallel()
	v := &Verdict{Click: "pass", Lead: "pass", Sale: "fail"}
	unverified := "Record a first real sale; until then going live is unverified."
	for _, tc := range []struct {
		name string
		f    facts
		want Gate
	}{
		{"a real sale", ready(), Gate{Status: Pass}},
		{"a real sale and a chain", with(func(f *facts) { f.Verdict = v }), Gate{Status: Pass, Verdict: v}},
		{"no real sale: unknown, not failed", with(func(f *facts) { f.LastSale = nil }), Gate{Status: Unknown, NextAction: &unverified}},
		{"no real sale, a chain", with(func(f *facts) { f.LastSale, f.Verdict = nil, v }), Gate{Status: Unknown, NextAction: &unverified, Verdict: v}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(liveGate(tc.f), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestBlockerAndState(t *testing.T) {
	t.Parallel()
	gates := func(failing ...string) map[string]Gate {
		g := map[string]Gate{}
		for _, n := range GateNames {
			g[n] = Gate{Status: Pass}
		}
		for _, n := range failing {
			g[n] = Gate{Status: Fail}
		}
		return g
	}
	unknownLive := gates()
	unknownLive["live"] = Gate{Status: Unknown}
	for _, tc := range []struct {
		name    string
		gates   map[string]Gate
		blocker string
		state   string
	}{
		{"all pass", gates(), "", "live_verified"},
		{"profile fails, and everything after", gates("profile", "economics", "payout", "tracking", "live"), "profile", "draft"},
		{"economics", gates("economics"), "economics", "configuring"},
		{"payout", gates("payout"), "payout", "configuring"},
		{"payout and tracking", gates("payout", "tracking"), "payout", "configuring"},
		{"tracking", gates("tracking"), "tracking", "ready"},
		{"tracking and live", gates("tracking", "live"), "tracking", "ready"},
		{"live unknown", unknownLive, "live", "integration_verified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := ""
			if p := blocker(tc.gates); p != nil {
				b = *p
			}
			if b != tc.blocker || state(tc.gates) != tc.state {
				t.Errorf("blocker %q, state %s; want %q, %s", b, state(tc.gates), tc.blocker, tc.state)
			}
		})
	}
}

// report puts the facts' times and counts, the checks and the gates together.
func TestReport(t *testing.T) {
	t.Parallel()
	f := with(func(f *facts) { f.Clicks24h, f.Leads24h, f.Sales24h, f.KeyRotatedAt, f.Partners = 3, 2, 1, seen, 0 })
	r := report(42, f)
	payout := payoutGate(f)
	want := Report{ProgramID: 42, State: "configuring", IntegrationVerified: true, Blocker: ptr("payout"),
		Gates: map[string]Gate{"profile": {Status: Pass}, "economics": {Status: Pass}, "payout": payout,
			"tracking": {Status: Pass}, "live": {Status: Pass}},
		Checks: checks(f), LastClick: seen, LastLead: seen, LastSale: seen, Clicks24h: 3, Leads24h: 2, Sales24h: 1, KeyRotatedAt: seen}
	if diff := cmp.Diff(r, want); diff != "" {
		t.Errorf("report (-got +want):\n%s", diff)
	}
}
