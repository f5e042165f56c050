package sales

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// decide, the sale's rules without the database: each documented refusal in its order, the attribution
// window, and which sales pay what.
func TestDecide(t *testing.T) {
	t.Parallel()
	paid := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	in := Input{ProgramID: 7, TransactionID: "o-1", AmountCents: 12345, Currency: "USD", CustomerKey: "c", OccurredAt: paid}
	program := func(typ, rate string, months *int) state {
		return state{ProgramFound: true, Currencies: []string{"USD", "EUR", "GBP"}, DefaultCurrency: ptr("EUR"), CommissionType: &typ,
			CommissionRate: &rate, DurationMonths: months, WindowDays: ptr(30), HoldDays: ptr(30), Approval: ptr("auto")}
	}
	// A customer who signed up 2 days after a click.
	customer := func(st state) state {
		st.CustomerID, st.CustomerVersion, st.CustomerKey = ptr(int64(11)), ptr("900"), ptr("c")
		st.CustomerClickRef, st.CustomerClickID = ptr(int64(21)), ptr("clk")
		st.CustomerClickTimestamp, st.SignedUpAt = ptr(paid.AddDate(0, 0, -40)), ptr(paid.AddDate(0, 0, -38))
		st.PartnerID, st.PartnerProgramID, st.Status, st.CustomerTest = ptr(int64(31)), ptr(int64(41)), ptr("lead"), ptr(false)
		return st
	}
	// The click behind click_id, of program 7, for a customer still to be made.
	click := func(st state, program int64) state {
		st.ClickRef, st.ClickProgramID, st.ClickPartnerID = ptr(int64(22)), &program, ptr(int64(32))
		st.ClickTimestamp, st.ClickTest, st.ClickPartnerProgramID = ptr(paid.AddDate(0, 0, -1)), ptr(false), ptr(int64(42))
		return st
	}
	byClick := in
	byClick.CustomerKey, byClick.ClickID = "", "clk-new"

	for _, tc := range []struct {
		name    string
		in      Input
		st      state
		wantErr error
		// want, when no error: whether it is written, whether it pays and how much, in which status.
		expired bool
		pays    bool
		amount  int64
		newCust bool
		status  string // "" for pending when it pays
	}{
		{name: "used transaction_id", in: in, st: func() state { s := customer(program("percent", "10", nil)); s.DuplicateID = ptr(int64(5)); return s }(),
			wantErr: &DuplicateError{SaleID: 5, ProgramID: 7}},
		{name: "program gone", in: in, st: state{}, wantErr: ErrProgramNotFound},
		{name: "a currency the program does not list, before a used transaction_id", in: func() Input { i := in; i.Currency = "JPY"; return i }(),
			st:      func() state { s := customer(program("percent", "10", nil)); s.DuplicateID = ptr(int64(5)); return s }(),
			wantErr: &CurrencyError{Currency: "JPY", Supported: []string{"USD", "EUR", "GBP"}}},
		{name: "the refusal says the currency as sent", in: func() Input { i := in; i.Currency, i.CurrencyAsSent = "JPY", "jpy"; return i }(),
			st: customer(program("percent", "10", nil)), wantErr: &CurrencyError{Currency: "jpy", Supported: []string{"USD", "EUR", "GBP"}}},
		{name: "no customer, no click", in: in, st: program("percent", "10", nil), wantErr: ErrCustomerNotFound},
		{name: "click unknown", in: byClick, st: program("percent", "10", nil), wantErr: ErrCustomerNotFound},
		{name: "click of another program", in: byClick, st: click(program("percent", "10", nil), 8), wantErr: ErrOtherProgram},
		{name: "no partner-program", in: in, st: func() state { s := customer(program("percent", "10", nil)); s.PartnerProgramID = nil; return s }(),
			wantErr: ErrNoPartnerProgram},
		{name: "no partner", in: in, st: func() state { s := customer(program("percent", "10", nil)); s.PartnerID = nil; return s }(),
			wantErr: ErrNoPartner},
		{name: "signed up outside the window", in: in, st: func() state {
			s := customer(program("percent", "10", nil))
			s.WindowDays = ptr(1)
			return s
		}(), expired: true},
		{name: "converted customers are not checked again", in: in, st: func() state {
			s := customer(program("recurring_percent", "10", nil))
			s.WindowDays, s.Status, s.FirstSale = ptr(1), ptr("converted"), ptr(paid.AddDate(0, 0, -5))
			return s
		}(), pays: true, amount: 1235},
		{name: "percent, first sale: half away from zero", in: in, st: customer(program("percent", "10", nil)), pays: true, amount: 1235},
		{name: "no currency sent: the program's default", in: func() Input { i := in; i.Currency = ""; return i }(),
			st: customer(program("fixed", "25", nil)), pays: true, amount: 2500},
		{name: "percent, second sale pays nothing", in: in, st: func() state {
			s := customer(program("percent", "10", nil))
			s.FirstSale = ptr(paid.AddDate(0, 0, -3))
			return s
		}()},
		{name: "fixed in major units", in: in, st: customer(program("fixed", "25", nil)), pays: true, amount: 2500},
		{name: "recurring within its duration", in: in, st: func() state {
			s := customer(program("recurring_fixed", "3.5", ptr(2)))
			s.FirstSale = ptr(paid.AddDate(0, -1, 0))
			return s
		}(), pays: true, amount: 350},
		{name: "recurring past its duration", in: in, st: func() state {
			s := customer(program("recurring_percent", "10", ptr(2)))
			s.FirstSale = ptr(paid.AddDate(0, -2, 0))
			return s
		}()},
		{name: "unreadable rate", in: in, st: customer(program("percent", "x", nil)), wantErr: &CommissionError{}},
		{name: "a customer made from the click", in: byClick, st: click(program("percent", "10", nil), 7), pays: true, amount: 1235, newCust: true},
		{name: "the customer's partner banned: made rejected", in: in, st: func() state {
			s := customer(program("percent", "10", nil))
			s.PartnerStatus = ptr("banned")
			return s
		}(), pays: true, amount: 1235, status: "rejected"},
		{name: "the click's partner banned: made rejected", in: byClick, st: func() state {
			s := click(program("percent", "10", nil), 7)
			s.ClickPartnerStatus = ptr("banned")
			return s
		}(), pays: true, amount: 1235, newCust: true, status: "rejected"},
		{name: "another partner of the customer's banned: the click's enrollment does not count", in: in, st: func() state {
			s := click(customer(program("percent", "10", nil)), 7)
			s.ClickPartnerStatus, s.PartnerStatus = ptr("banned"), ptr("approved")
			return s
		}(), pays: true, amount: 1235},
		{name: "no hold, auto approval: approved at once", in: in, st: func() state {
			s := customer(program("percent", "10", nil))
			s.HoldDays = ptr(0)
			return s
		}(), pays: true, amount: 1235, status: "approved"},
		{name: "no hold, manual approval: pending", in: in, st: func() state {
			s := customer(program("percent", "10", nil))
			s.HoldDays, s.Approval = ptr(0), ptr("manual")
			return s
		}(), pays: true, amount: 1235},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := decide(tc.in, tc.st, paid)
			if tc.wantErr != nil {
				var dup *DuplicateError
				var ce *CommissionError
				switch want := tc.wantErr.(type) {
				case *DuplicateError:
					if !errors.As(err, &dup) || *dup != *want {
						t.Fatalf("err = %v, want %v", err, want)
					}
				case *CommissionError:
					if !errors.As(err, &ce) {
						t.Fatalf("err = %v, want a CommissionError", err)
					}
				case *CurrencyError:
					var cur *CurrencyError
					if !errors.As(err, &cur) || !cmp.Equal(cur, want) {
						t.Fatalf("err = %#v, want %#v", err, want)
					}
				default:
					if !errors.Is(err, want) {
						t.Fatalf("err = %v, want %v", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				Expired, Pays, New bool
				Amount             int64
				Status             string
			}
			got := outcome{p.window.Expired, p.outcome.Pays, p.cust.ID == 0, p.outcome.AmountCents, p.outcome.Status}
			if wantCurrency := tc.in.Currency; p.currency != wantCurrency && !(wantCurrency == "" && p.currency == "EUR") {
				t.Errorf("currency %q, want %q (or the program's default EUR when none is sent)", p.currency, wantCurrency)
			}
			want := outcome{tc.expired, tc.pays, tc.newCust, tc.amount, tc.status}
			if tc.pays && want.Status == "" {
				want.Status = "pending"
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// A customer made by the sale takes the click's partner and test flag, and the sale's key.
func TestDecideMakesTheCustomerFromTheClick(t *testing.T) {
	t.Parallel()
	program, rate := "percent", "10"
	st := state{ProgramFound: true, Currencies: []string{"USD"}, DefaultCurrency: ptr("USD"), CommissionType: &program, CommissionRate: &rate, WindowDays: ptr(30),
		ClickRef: ptr(int64(22)), ClickProgramID: ptr(int64(7)), ClickPartnerID: ptr(int64(32)),
		ClickTimestamp: ptr(time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)), ClickTest: ptr(true), ClickPartnerProgramID: ptr(int64(42))}
	p, err := decide(Input{ProgramID: 7, TransactionID: "o", AmountCents: 100, Currency: "USD", CustomerKey: "new", ClickID: "clk",
		OccurredAt: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}, st, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	c := p.cust
	if c.ID != 0 || *c.Key != "new" || *c.ClickRef != 22 || *c.ClickID != "clk" || *c.PartnerID != 32 || *c.PartnerProgramID != 42 ||
		!c.IsTest || !p.test {
		t.Errorf("customer = %+v (test %v)", c, p.test)
	}
}
