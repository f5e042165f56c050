package readiness

import "github.com/reftrack/reftrack/pkg/programs"

// The gates and checks, pure functions of a program's facts (read by readFacts).

// report is the program's readiness as its facts say.
func report(programID int64, f facts) Report {
	r := Report{ProgramID: programID, LastClick: f.LastClick, LastLead: f.LastLead, LastSale: f.LastSale,
		Clicks24h: f.Clicks24h, Leads24h: f.Leads24h, Sales24h: f.Sales24h, KeyRotatedAt: f.KeyRotatedAt}
	r.Checks = checks(f)
	r.Gates = map[string]Gate{
		"profile":   profileGate(f),
		"economics": economicsGate(f),
		"payout":    payoutGate(f),
		"tracking":  trackingGate(r.Checks),
		"live":      liveGate(f),
	}
	r.Blocker = blocker(r.Gates)
	r.IntegrationVerified = r.Gates["tracking"].Status == Pass
	r.State = state(r.Gates)
	return r
}

// checks are the integration's checks, in the order they are shown.
func checks(f facts) []Check {
	return []Check{
		check("tracker_click_seen", f.LastClick != nil,
			"Install the tracker tag on every page and open your site through a referral link (?aff=…)."),
		check("server_lead_seen", f.ServerLeads > 0,
			"Report sign-ups from your backend: POST /api/v1/track/lead with the program key, the click_id and your customer_key."),
		check("sale_seen", f.LastSale != nil,
			"Report payments from your backend (POST /api/v1/track/sale) or connect your payment processor."),
		check("allowed_origins_set", f.Origins > 0,
			"List your site's origin (such as https://www.example.com) in the program's allowed origins."),
		optional(check("processor_connected", f.Processor,
			"Optional: connect your payment processor so payments are attributed without code.")),
		optional(check("processor_charges_seen", f.Charges,
			"Optional: once the processor is connected, a first live payment it reports proves its charges reach reftrack.")),
		domainCheck(f.DNSVerified, programs.DNSRecordOf(f.Domain, f.DNSToken)),
	}
}

// check passes when ok, and fails with hint otherwise.
func check(id string, ok bool, hint string) Check {
	if ok {
		return Check{ID: id, Status: Pass, Hint: "Done."}
	}
	return Check{ID: id, Status: Fail, Hint: hint}
}

// optional is c as an optional check: not done, it is unknown, never fail, since nothing waits on it.
func optional(c Check) Check {
	if c.Status == Fail {
		c.Status = Unknown
	}
	return c
}

// gate passes when ok, and fails with action to take otherwise.
func gate(ok bool, action string) Gate {
	if ok {
		return Gate{Status: Pass}
	}
	return Gate{Status: Fail, NextAction: &action}
}

// profileGate wants the program's name and domain.
func profileGate(f facts) Gate {
	return gate(f.Name != "" && f.Domain != "", "Give the program a name and your site's domain.")
}

// economicsGate wants a commission that pays.
func economicsGate(f facts) Gate {
	return gate(f.CommissionOK, "Set the commission type and rate.")
}

// payoutGate wants a real partner and an enabled referral link of a real partner.
func payoutGate(f facts) Gate {
	return gate(f.Partners > 0 && f.ActiveLinks > 0, "Add a partner and give them a referral link.")
}

// trackingChecks are the checks the tracking gate wants passed.
var trackingChecks = []string{"allowed_origins_set", "tracker_click_seen", "server_lead_seen"}

// trackingGate passes when its checks pass; else its next action is the hint of the first that does not
// (in the order of the report's checks).
func trackingGate(cs []Check) Gate {
	for _, c := range cs {
		for _, id := range trackingChecks {
			if c.ID == id && c.Status != Pass {
				return gate(false, c.Hint)
			}
		}
	}
	return gate(true, "")
}

// liveGate passes once a real sale is recorded (unknown before: going live is unverified, not failed),
// with the last synthetic chain's verdict when one ran.
func liveGate(f facts) Gate {
	live := Gate{Status: Pass}
	if f.LastSale == nil {
		action := "Record a first real sale; until then going live is unverified."
		live = Gate{Status: Unknown, NextAction: &action}
	}
	live.Verdict = f.Verdict
	return live
}

// blocker is the first gate, in GateNames order, that does not pass; nil when all pass.
func blocker(gates map[string]Gate) *string {
	for _, name := range GateNames {
		if gates[name].Status != Pass {
			return &name
		}
	}
	return nil
}

// state is where the program stands, from its gates.
func state(gates map[string]Gate) string {
	switch {
	case gates["profile"].Status != Pass:
		return "draft"
	case gates["economics"].Status != Pass || gates["payout"].Status != Pass:
		return "configuring"
	case gates["tracking"].Status != Pass:
		return "ready"
	case gates["live"].Status != Pass:
		return "integration_verified"
	}
	return "live_verified"
}
