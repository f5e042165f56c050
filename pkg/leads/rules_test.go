package leads

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/programs"
)

func ptr[T any](v T) *T { return &v }

// decide, the lead's rules without the database: each refusal, server and browser mode, provisional
// leads, and which customer a settled lead writes.
func TestDecide(t *testing.T) {
	t.Parallel()
	// Program 7, whose click clk (row 21, partner 31) is known.
	program := state{ProgramID: ptr(int64(7)), LeadAuth: ptr(programs.LeadAuthServerRequired),
		AllowedOrigins: []string{"https://shop.example.com"}}
	withClick := func(st state, program int64) state {
		st.ClickRef, st.ClickID, st.ClickProgramID, st.ClickPartnerID, st.ClickTest = ptr(int64(21)), ptr("clk"), &program, ptr(int64(31)), ptr(false)
		return st
	}
	// Customer 11 of the program, made from the click, at status.
	withCustomer := func(st state, status string) state {
		st.Customer, st.Version, st.CustomerKey, st.CustomerClick, st.CustomerClkID = ptr(int64(11)), ptr("900"), ptr("c"), ptr(int64(21)), ptr("clk")
		st.PartnerID, st.Status, st.CustomerTest = ptr(int64(31)), &status, ptr(false)
		return st
	}
	// The click's provisional lead 40, a test one or not, with the class its writer stored.
	withProvisional := func(st state, test bool) state {
		class := counting.Lead(test, true)
		st.Provisional, st.ProvisionalTest = ptr(int64(40)), &test
		if class != counting.LeadNowhere {
			st.ProvisionalCountsAs = &class
		}
		return st
	}
	server := Input{ProgramID: 7, ServerMode: true, ClickID: "clk", CustomerKey: "c", Email: "a@example.com", Source: SourceServer}
	browser := Input{ClickID: "clk", Origin: "https://shop.example.com", Source: SourceBrowser}
	suspended := withClick(program, 7)
	suspended.OwnerSuspended = true
	allowed := program
	allowed.LeadAuth = ptr("browser_allowed")

	for _, tc := range []struct {
		name string
		in   Input
		st   state
		want plan
		err  error
	}{
		{name: "server mode, new customer from the click", in: server, st: withClick(program, 7), want: plan{kind: kindSettle,
			programID: 7, clickRef: 21, clickID: "clk", partnerID: 31, key: "c", email: "a@example.com", source: SourceServer,
			countsAs: counting.LeadCounted, counts: counting.Measures{Leads: 1}, countPartner: 31,
			res: Result{CustomerKey: ptr("c"), ProgramID: 7, Attribution: Attribution{Status: "attributed", ClickID: ptr("clk"), PartnerID: ptr(int64(31)), ProgramID: ptr(int64(7))}}}},
		{name: "server mode, stored visitor", in: server, st: withCustomer(withClick(program, 7), "visitor"), want: plan{kind: kindSettle,
			customer: 11, version: "900", programID: 7, clickRef: 21, clickID: "clk", key: "c", email: "a@example.com", source: SourceServer,
			countsAs: counting.LeadCounted, counts: counting.Measures{Leads: 1}, countPartner: 31,
			res: Result{CustomerKey: ptr("c"), ProgramID: 7, Attribution: Attribution{Status: "attributed", ClickID: ptr("clk"), PartnerID: ptr(int64(31)), ProgramID: ptr(int64(7))}}}},
		{name: "server mode, the click's provisional lead settles: it moves from listed to counted", in: server,
			st: withProvisional(withClick(program, 7), false), want: plan{kind: kindSettle,
				programID: 7, clickRef: 21, clickID: "clk", partnerID: 31, key: "c", email: "a@example.com", source: SourceServer,
				provisional: 40, countsAs: counting.LeadCounted, counts: counting.Measures{Leads: 1, ProvisionalLeads: -1}, countPartner: 31,
				res: Result{CustomerKey: ptr("c"), ProgramID: 7, Attribution: Attribution{Status: "attributed", ClickID: ptr("clk"), PartnerID: ptr(int64(31)), ProgramID: ptr(int64(7))}}}},
		{name: "server mode, a test provisional lead settles: still a test, counted nowhere", in: server,
			st: withProvisional(withClick(program, 7), true), want: plan{kind: kindSettle,
				programID: 7, clickRef: 21, clickID: "clk", partnerID: 31, key: "c", email: "a@example.com", source: SourceServer,
				provisional: 40, countsAs: counting.LeadNowhere, countPartner: 31,
				res: Result{CustomerKey: ptr("c"), ProgramID: 7, Attribution: Attribution{Status: "attributed", ClickID: ptr("clk"), PartnerID: ptr(int64(31)), ProgramID: ptr(int64(7))}}}},
		{name: "customer already a lead", in: server, st: withCustomer(withClick(program, 7), "lead"), err: &StatusError{Status: "lead"}},
		{name: "click of another program", in: server, st: withClick(program, 8), err: ErrOtherProgram},
		{name: "no program", in: server, st: withClick(state{}, 7), err: ErrCustomerNotFound},
		{name: "no click, no customer", in: server, st: program, err: ErrCustomerNotFound},
		{name: "owner suspended", in: browser, st: suspended, err: accounts.ErrSuspended},
		{name: "browser mode, origin not allowed", in: Input{ClickID: "clk", Origin: "https://evil.example"}, st: withClick(program, 7), err: ErrOriginNotAllowed},
		{name: "browser mode without a click or program", in: Input{CustomerKey: "c"}, st: program, err: ErrCustomerNotFound},
		{name: "browser mode, server_required: provisional on the click", in: browser, st: withClick(program, 7), want: plan{kind: kindProvisional,
			programID: 7, clickRef: 21, clickID: "clk", source: SourceBrowser,
			countsAs: counting.LeadProvisional, counts: counting.Measures{ProvisionalLeads: 1}, countPartner: 31,
			res: Result{Provisional: true, ProgramID: 7, Attribution: Attribution{Status: "provisional", ClickID: ptr("clk"), PartnerID: ptr(int64(31)), ProgramID: ptr(int64(7))}}}},
		{name: "browser mode, server_required, known key and no click: answered, nothing written", in: Input{ProgramID: 7, CustomerKey: "c"},
			st: withCustomer(program, "lead"), want: plan{kind: kindNone, programID: 7, key: "c", source: SourceBrowser,
				res: Result{Provisional: true, ProgramID: 7, Attribution: Attribution{Status: "provisional", ProgramID: ptr(int64(7))}}}},
		{name: "browser mode, browser_allowed: settled", in: browser, st: withClick(allowed, 7), want: plan{kind: kindSettle,
			programID: 7, clickRef: 21, clickID: "clk", partnerID: 31, source: SourceBrowser,
			countsAs: counting.LeadCounted, counts: counting.Measures{Leads: 1}, countPartner: 31,
			res: Result{ProgramID: 7, Attribution: Attribution{Status: "attributed", ClickID: ptr("clk"), PartnerID: ptr(int64(31)), ProgramID: ptr(int64(7))}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decide(tc.in, tc.st)
			if tc.err != nil {
				if err == nil || (!errors.Is(err, tc.err) && err.Error() != tc.err.Error()) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(plan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
