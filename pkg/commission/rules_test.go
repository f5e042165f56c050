package commission

import (
	"strings"
	"testing"
	"time"
)

func months(n int) *int { return &n }

// Which reward pays an event: the partner's own rewards replace the group's for that event; among the
// rewards whose conditions hold the best-paying wins, ties to the lowest id; durations count from the
// customer's first sale; nothing paying says why.
func TestChoose(t *testing.T) {
	t.Parallel()
	sold := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	first := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	sale := func(cents int64, currency string, firstSale *time.Time) Facts {
		return Facts{Sale: Sale{AmountCents: cents, Currency: currency, OccurredAt: sold, FirstSaleAt: firstSale}}
	}
	percent := func(id int64, p string, d *int, cs ...Condition) Rule {
		return Rule{ID: id, Event: EventSale, Kind: KindPercent, Percent: p, DurationMonths: d, Conditions: cs}
	}
	flat := func(id int64, event string, amounts map[string]int64, cs ...Condition) Rule {
		return Rule{ID: id, Event: event, Kind: KindFlat, Amounts: amounts, Conditions: cs}
	}
	eur := Condition{Field: FieldCurrency, Op: OpEq, Value: "EUR"}
	lifetime20 := percent(1, "20", nil)
	first3m30EUR := percent(2, "30", months(3), eur)
	group := []Rule{lifetime20, first3m30EUR, flat(3, EventClick, map[string]int64{"USD": 5}), flat(4, EventLead, map[string]int64{"USD": 200, "EUR": 180})}

	for _, tc := range []struct {
		name     string
		event    string
		partner  []Rule
		group    []Rule
		facts    Facts
		currency string
		wantID   int64 // 0: nothing pays
		cents    int64
		why      string
	}{
		{"a USD first sale: the lifetime 20 % (the EUR reward's condition fails)", EventSale, nil, group, sale(10000, "USD", nil), "USD", 1, 2000, ""},
		{"a EUR first sale: 30 % beats 20 %", EventSale, nil, group, sale(10000, "EUR", nil), "USD", 2, 3000, ""},
		{"a EUR sale 2 months after the first: 30 % still", EventSale, nil, group, sale(10000, "EUR", ptrTime(sold.AddDate(0, -2, 0))), "USD", 2, 3000, ""},
		{"a EUR sale past 3 months: back to 20 %", EventSale, nil, group, sale(10000, "EUR", &first), "USD", 1, 2000, ""},
		{"percent rounds half away from zero", EventSale, nil, []Rule{percent(9, "12.5", nil)}, sale(1004, "USD", nil), "USD", 9, 126, ""},
		{"first sale only, on a repeat customer", EventSale, nil, []Rule{percent(5, "20", months(0))}, sale(10000, "USD", &first), "USD", 0, 0, WhyFirstSaleOnly},
		{"a duration ended", EventSale, nil, []Rule{percent(5, "20", months(3))}, sale(10000, "USD", &first), "USD", 0, 0, WhyDurationEnded},
		{"no reward for the event", EventSale, nil, []Rule{flat(3, EventClick, map[string]int64{"USD": 5})}, sale(100, "USD", nil), "USD", 0, 0, WhyNoReward},
		{"no reward's condition holds", EventSale, nil, []Rule{first3m30EUR}, sale(100, "USD", nil), "USD", 0, 0, WhyNoReward},
		{"a flat sale reward without the sale's currency pays nothing", EventSale, nil, []Rule{flat(7, EventSale, map[string]int64{"USD": 500})}, sale(100, "GBP", nil), "USD", 0, 0, WhyNoReward},
		{"ties go to the lowest id", EventSale, nil, []Rule{flat(8, EventSale, map[string]int64{"USD": 500}), flat(6, EventSale, map[string]int64{"USD": 500})}, sale(100, "USD", nil), "USD", 6, 500, ""},
		{"the partner's own sale reward replaces the group's, even paying less", EventSale, []Rule{percent(10, "5", nil)}, group, sale(10000, "EUR", nil), "USD", 10, 500, ""},
		{"a partner's own click reward leaves the group's sale rewards", EventSale, []Rule{flat(11, EventClick, map[string]int64{"USD": 9})}, group, sale(10000, "USD", nil), "USD", 1, 2000, ""},
		{"a click pays in the program's default currency", EventClick, nil, group, Facts{}, "USD", 3, 5, ""},
		{"a lead in EUR, the program's default", EventLead, nil, group, Facts{}, "EUR", 4, 180, ""},
		{"a click with no amount in the default currency", EventClick, nil, group, Facts{}, "EUR", 0, 0, WhyNoReward},
		{"a lead's country condition", EventLead, nil, []Rule{flat(12, EventLead, map[string]int64{"USD": 100}, Condition{Field: FieldCustomerCountry, Op: OpIn, Value: []any{"DE", "FR"}})},
			Facts{CustomerCountry: "FR"}, "USD", 12, 100, ""},
		{"a duration's reason is kept when another fails its conditions", EventSale, nil, []Rule{percent(1, "20", months(0)), first3m30EUR}, sale(100, "USD", &first), "USD", 0, 0, WhyFirstSaleOnly},
	} {
		got, err := Choose(tc.event, tc.partner, tc.group, tc.facts, tc.currency)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var id int64
		if got.Rule != nil {
			id = got.Rule.ID
		}
		if id != tc.wantID || got.Cents != tc.cents || got.Why != tc.why {
			t.Errorf("%s: reward %d paying %d (why %q), want %d paying %d (why %q)", tc.name, id, got.Cents, got.Why, tc.wantID, tc.cents, tc.why)
		}
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

// Each condition field and operator, on a sale.
func TestConditionsHold(t *testing.T) {
	t.Parallel()
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := Facts{Sale: Sale{AmountCents: 4900, Currency: "EUR", FirstSaleAt: &first}, ProductID: "pro-plan", CustomerCountry: "DE",
		Metadata: map[string]string{"plan": "annual"}}
	for _, tc := range []struct {
		c    Condition
		want bool
	}{
		{Condition{FieldProductID, OpEq, "pro-plan"}, true},
		{Condition{FieldProductID, OpNeq, "pro-plan"}, false},
		{Condition{FieldProductID, OpIn, []string{"basic", "pro-plan"}}, true},
		{Condition{FieldProductID, OpIn, []any{"basic", 3.0}}, false}, // not a list of strings
		{Condition{FieldCustomerCountry, OpEq, "DE"}, true},
		{Condition{FieldCustomerCountry, OpIn, []any{"FR"}}, false},
		{Condition{FieldSaleAmount, OpGte, 4900.0}, true},
		{Condition{FieldSaleAmount, OpGte, int64(4901)}, false},
		{Condition{FieldSaleAmount, OpLte, 4900}, true},
		{Condition{FieldSaleAmount, OpEq, 4900.5}, false}, // not whole
		{Condition{FieldSaleAmount, OpNeq, 1}, true},
		{Condition{FieldCurrency, OpEq, "EUR"}, true},
		{Condition{FieldSaleType, OpEq, SaleTypeRecurring}, true},
		{Condition{FieldSaleType, OpEq, SaleTypeNew}, false},
		{Condition{"metadata.plan", OpEq, "annual"}, true},
		{Condition{"metadata.seats", OpEq, ""}, true}, // an absent key reads empty
		{Condition{"metadata.plan", OpGte, "a"}, false},
		{Condition{"unknown", OpEq, "x"}, false},
	} {
		if got := (Rule{Conditions: []Condition{tc.c}}).Holds(f); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.c, got, tc.want)
		}
	}
	if (Rule{Conditions: []Condition{{FieldCurrency, OpEq, "EUR"}, {FieldProductID, OpEq, "basic"}}}).Holds(f) {
		t.Error("two conditions, one failing: held")
	}
}

// A reward out of its rules is refused with what to fix.
func TestCheckRule(t *testing.T) {
	t.Parallel()
	currencies := []string{"USD", "EUR", "GBP"}
	ok := []Rule{
		{Event: EventSale, Kind: KindPercent, Percent: "20"},
		{Event: EventSale, Kind: KindPercent, Percent: "12.75", DurationMonths: months(0)},
		{Event: EventSale, Kind: KindPercent, Percent: "100", Conditions: []Condition{{FieldSaleAmount, OpGte, 1000.0}, {"metadata.plan", OpIn, []any{"a"}}}},
		{Event: EventSale, Kind: KindFlat, Amounts: map[string]int64{"USD": 500, "GBP": 400}},
		{Event: EventClick, Kind: KindFlat, Amounts: map[string]int64{"USD": 5}, DailyCap: 200, Conditions: []Condition{{FieldCustomerCountry, OpEq, "DE"}}},
		{Event: EventLead, Kind: KindFlat, Amounts: map[string]int64{"EUR": 150}},
	}
	for _, r := range ok {
		if err := CheckRule(r, currencies); err != nil {
			t.Errorf("%+v refused: %v", r, err)
		}
	}
	for _, tc := range []struct {
		r    Rule
		want string
	}{
		{Rule{Event: "signup", Kind: KindFlat}, "event must be one of click, lead, sale"},
		{Rule{Event: EventSale, Kind: "tiered"}, "type must be one of percent, flat"},
		{Rule{Event: EventClick, Kind: KindPercent, Percent: "5"}, "a percent reward pays for sales only: a click reward is flat"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "0"}, "value must be a percentage above 0 and at most 100, with at most 2 decimals"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "100.01"}, "value must be a percentage"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "1.234"}, "value must be a percentage"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "1e2"}, "value must be a percentage"},
		{Rule{Event: EventSale, Kind: KindFlat}, `amounts must name at least one currency`},
		{Rule{Event: EventSale, Kind: KindFlat, Amounts: map[string]int64{"JPY": 500}}, "amounts: currency JPY is not one of the program's (USD, EUR, GBP)"},
		{Rule{Event: EventSale, Kind: KindFlat, Amounts: map[string]int64{"USD": 0}}, "amounts: USD must be between 1 and"},
		{Rule{Event: EventLead, Kind: KindFlat, Amounts: map[string]int64{"USD": 1}, DurationMonths: months(3)}, "duration_months is for sale rewards"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", DurationMonths: months(-1)}, "duration_months must be between 0 and 120, or null for every sale"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", DailyCap: 10}, "daily_cap is for click rewards"},
		{Rule{Event: EventClick, Kind: KindFlat, Amounts: map[string]int64{"USD": 1}, DailyCap: -1}, "daily_cap must be between 1 and 1000000"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{"colour", OpEq, "red"}}}, "conditions[0]: field must be one of"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{"metadata.", OpEq, "x"}}}, "conditions[0]: field must be one of"},
		{Rule{Event: EventLead, Kind: KindFlat, Amounts: map[string]int64{"USD": 1}, Conditions: []Condition{{FieldProductID, OpEq, "x"}}},
			"conditions[0]: field product_id is a sale's; a lead reward's conditions read customer_country only"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldCurrency, "like", "E%"}}}, "conditions[0]: op must be one of eq, neq, in, gte, lte"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldSaleAmount, OpIn, []any{"1"}}}}, "conditions[0]: sale_amount_cents takes eq, neq, gte or lte"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldSaleAmount, OpGte, "100"}}}, "conditions[0]: value must be an integer amount in minor units"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldCurrency, OpGte, "EUR"}}}, "conditions[0]: gte compares sale_amount_cents only; currency takes eq, neq or in"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldCurrency, OpIn, []any{}}}}, "conditions[0]: value must be a list of 1 to 100 strings"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldSaleType, OpEq, "first"}}}, "conditions[0]: sale_type is new or recurring"},
		{Rule{Event: EventSale, Kind: KindPercent, Percent: "5", Conditions: []Condition{{FieldProductID, OpEq, 7.0}}}, "conditions[0]: value must be a string of 1 to 200 characters"},
	} {
		err := CheckRule(tc.r, currencies)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
	many := Rule{Event: EventSale, Kind: KindPercent, Percent: "5"}
	for range MaxConditions + 1 {
		many.Conditions = append(many.Conditions, Condition{FieldCurrency, OpEq, "USD"})
	}
	if err := CheckRule(many, currencies); err == nil || err.Error() != "conditions: at most 20" {
		t.Errorf("21 conditions: %v", err)
	}
}

// The interface's terms are one Rule: the default group's sale reward pays as the interface's commission
// types did, for every rate and duration, first and repeat sales alike.
func TestInterfaceTermsAreARule(t *testing.T) {
	t.Parallel()
	sold := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	for _, terms := range []Terms{
		{Type: Percent, Rate: "20"}, {Type: RecurringPercent, Rate: "12.5"}, {Type: RecurringPercent, Rate: "30", DurationMonths: months(12)},
		{Type: Fixed, Rate: "25"}, {Type: RecurringFixed, Rate: "7.5"}, {Type: RecurringFixed, Rate: "100", DurationMonths: months(1)},
	} {
		rule, err := RuleOf(terms, []string{"USD", "EUR", "VND"})
		if err != nil {
			t.Fatalf("%+v: %v", terms, err)
		}
		old, _ := RewardOf(terms)
		for _, s := range []Sale{
			{AmountCents: 4999, Currency: "USD", OccurredAt: sold},
			{AmountCents: 125000, Currency: "VND", OccurredAt: sold, FirstSaleAt: ptrTime(sold.AddDate(0, -2, 0))},
			{AmountCents: 1001, Currency: "EUR", OccurredAt: sold, FirstSaleAt: ptrTime(sold.AddDate(-1, 0, 0))},
		} {
			wantCents, wantWhy, err1 := old.Pay(s)
			gotCents, gotWhy, err2 := rule.Pay(s)
			if err1 != nil || err2 != nil || gotCents != wantCents || gotWhy != wantWhy {
				t.Errorf("%+v on %+v: rule pays %d (%q, %v), the interface's terms %d (%q, %v)", terms, s, gotCents, gotWhy, err2, wantCents, wantWhy, err1)
			}
		}
	}
}
