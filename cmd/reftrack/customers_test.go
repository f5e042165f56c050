package main

import (
	"regexp"
	"strings"
	"testing"
)

// `reftrack customers` prints what the customers route answers, as a table or as its JSON, filtered and a
// page at a time; a refused filter never leaves the machine.
func TestCLICustomers(t *testing.T) {
	t.Parallel()
	l := newLedgerCLI(t)
	l.sale("txn-usd", 10000, "USD") // customer cust-txn-usd: 20% of 100.00 USD
	l.sale("txn-eur", 5050, "EUR")  // cust-txn-eur: 10.10 EUR

	out := l.must("customers")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !row("ID", "CUSTOMER", "PARTNER", "STATUS", "FIRST SALE", "REVENUE", "COMMISSION").MatchString(lines[0]) {
		t.Fatalf("customers printed\n%s", out)
	}
	for i, want := range []string{ // newest first
		`^\d+ +cust-txn-eur +Seed partner +converted +\d{4}-\d{2}-\d{2} +50\.50 EUR +10\.10 EUR *$`,
		`^\d+ +cust-txn-usd +Seed partner +converted +\d{4}-\d{2}-\d{2} +100\.00 USD +20\.00 USD *$`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i+1]) {
			t.Errorf("row %d = %q, want %s", i+1, lines[i+1], want)
		}
	}
	l.sameJSON(l.must("customers", "--json"), l.base+"/customers")
	l.sameJSON(l.must("customers", "--json", "--status", "converted", "--partner", l.partner, "--limit", "1"),
		l.base+"/customers?status=converted&partner_id="+l.partner+"&limit=1")
	if out := l.must("customers", "--status", "lead"); out != "No customers.\n" {
		t.Errorf("--status lead printed %q", out)
	}
	out = l.must("customers", "--limit", "1")
	if !strings.Contains(out, "cust-txn-eur") || strings.Contains(out, "cust-txn-usd") || !strings.HasSuffix(out, "More customers: run it with --all to list every page.\n") {
		t.Errorf("--limit 1 printed\n%s", out)
	}
	if out := l.must("customers", "--limit", "1", "--all"); strings.Count(out, "cust-txn-") != 2 {
		t.Errorf("--all printed\n%s", out)
	}

	for args, want := range map[string]string{
		"customers --status buyer": "Error: status must be one of visitor, lead, converted",
		"customers --limit 101":    "Error: limit must be between 1 and 100",
		"customers --partner 0":    "Error: a partner is named by its id, a positive integer, not 0\nNext: `reftrack partners` lists the program's partners with their ids.",
	} {
		sent := l.sent.total()
		out, errOut, err := l.run(strings.Fields(args)...)
		if err == nil || out != "" || errOut != want {
			t.Errorf("reftrack %s: %v, printed %q and %q, want %q", args, err, out, errOut, want)
		}
		if n := l.sent.total() - sent; n != 0 {
			t.Errorf("reftrack %s sent %d requests", args, n)
		}
	}
}
