package commission

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
)

// A program's plan: each group of partners, and a partner of their
// own, has rewards for clicks, leads and sales. For an event, among the rewards for it whose conditions
// hold, the one paying the most wins (ties: the lowest id). This file holds those rules; the database
// only stores rewards and reads the ones in force when an event happened.

// Events a reward pays for.
const (
	EventClick = "click"
	EventLead  = "lead"
	EventSale  = "sale"
)

// Events lists the events, in their order in a customer's life.
var Events = []string{EventClick, EventLead, EventSale}

// Kinds of reward.
const (
	KindPercent = "percent" // a share of a sale's amount (sales only)
	KindFlat    = "flat"    // an amount per currency, in minor units
)

// Condition fields and operators.
const (
	FieldProductID       = "product_id"
	FieldCustomerCountry = "customer_country"
	FieldSaleAmount      = "sale_amount_cents"
	FieldCurrency        = "currency"
	FieldSaleType        = "sale_type"
	FieldMetadataPrefix  = "metadata."

	OpEq  = "eq"
	OpNeq = "neq"
	OpIn  = "in"
	OpGte = "gte"
	OpLte = "lte"

	SaleTypeNew       = "new"       // the customer's first recorded sale
	SaleTypeRecurring = "recurring" // any later one
)

// Limits of a reward.
const (
	MaxConditions   = 20
	MaxInValues     = 100
	MaxFlatCents    = 1_000_000_000_00 // 1,000,000,000.00 in a 2-decimal currency
	DefaultDailyCap = 1000
	MaxDailyCap     = 1_000_000
	MaxRewardMonths = 120
)

// WhyNoReward is why an attributed event pays nothing when no reward for it applies (none for the event,
// or none whose conditions hold).
const WhyNoReward = "no_matching_reward"

// Condition is one test a reward's event must pass: Field Op Value. Value is a string, an integer
// (sale_amount_cents) or, for OpIn, a list of strings.
type Condition struct {
	Field string `json:"field"`
	Op    string `json:"op"`
	Value any    `json:"value"`
}

// Rule is one reward, at one version: what it pays for which event, under which conditions.
type Rule struct {
	ID      int64
	Version int
	Event   string // EventClick, EventLead, EventSale
	Kind    string // KindPercent, KindFlat
	// Percent is a percentage as decimal text (KindPercent: 0 < p ≤ 100, at most 2 decimals).
	Percent string
	// Amounts are KindFlat's amounts per currency, in minor units.
	Amounts map[string]int64
	// DurationMonths (sales): 0 pays the customer's first sale only, N the sales within N months of the
	// first, nil every sale.
	DurationMonths *int
	Conditions     []Condition
	DailyCap       int // click rewards: paid clicks per partner per UTC day (0: DefaultDailyCap)
}

// Facts are what a reward's conditions read about an event, beside the sale itself.
type Facts struct {
	Sale            Sale
	ProductID       string
	CustomerCountry string
	Metadata        map[string]string
}

// SaleType is the sale's type for conditions: new for the customer's first recorded sale.
func (f Facts) SaleType() string {
	if f.Sale.FirstSaleAt == nil {
		return SaleTypeNew
	}
	return SaleTypeRecurring
}

// Choice is the reward chosen for an event: the rule that pays and what it pays, or why nothing does.
type Choice struct {
	Rule  *Rule // nil when nothing pays
	Cents int64
	Why   string // WhyNoReward, WhyFirstSaleOnly, WhyDurationEnded; "" when Rule pays
}

// Choose chooses what pays for an event: the partner's own rewards for it when they have any (they replace
// their group's for that event), else the group's; among those whose conditions hold, the one paying the
// most (ties: the lowest id). Click and lead rewards pay in currency (the program's default currency);
// sales in the sale's. When nothing pays, Why says why: the reason of the first matching reward in id
// order that paid nothing (a duration over), else WhyNoReward.
func Choose(event string, partner, group []Rule, f Facts, currency string) (Choice, error) {
	rules := forEvent(partner, event)
	if len(rules) == 0 {
		rules = forEvent(group, event)
	}
	slices.SortFunc(rules, func(a, b Rule) int { return compareID(a.ID, b.ID) })
	best := Choice{Why: WhyNoReward}
	for i := range rules {
		r := &rules[i]
		if !r.Holds(f) {
			continue
		}
		cents, why, err := r.pay(f.Sale, currency)
		if err != nil {
			return Choice{}, err
		}
		switch {
		case why != "":
			if best.Rule == nil && best.Why == WhyNoReward {
				best.Why = why
			}
		case best.Rule == nil || cents > best.Cents:
			best = Choice{Rule: r, Cents: cents}
		}
	}
	return best, nil
}

func forEvent(rules []Rule, event string) []Rule {
	var out []Rule
	for _, r := range rules {
		if r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

func compareID(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Pay is what the rule pays for a sale (a Reward): its conditions are the caller's (Choose).
func (r Rule) Pay(s Sale) (int64, string, error) { return r.pay(s, s.Currency) }

// pay is what the rule pays for an event: a sale in its currency, a click or a lead in currency. A sale
// past the rule's duration pays nothing (WhyFirstSaleOnly, WhyDurationEnded); a flat rule without an
// amount in the currency pays nothing either (WhyNoReward).
func (r Rule) pay(s Sale, currency string) (int64, string, error) {
	if r.Event == EventSale {
		currency = s.Currency
		if first := s.FirstSaleAt; first != nil && r.DurationMonths != nil {
			if *r.DurationMonths == 0 {
				return 0, WhyFirstSaleOnly, nil
			}
			if !s.OccurredAt.Before(first.AddDate(0, *r.DurationMonths, 0)) {
				return 0, WhyDurationEnded, nil
			}
		}
	}
	switch r.Kind {
	case KindPercent:
		p, ok := new(big.Rat).SetString(r.Percent)
		if !ok {
			return 0, "", fmt.Errorf("reward %d: percent %q is not a number", r.ID, r.Percent)
		}
		v := new(big.Rat).Mul(new(big.Rat).SetInt64(s.AmountCents), p)
		cents, err := RoundHalfAwayFromZero(v.Quo(v, big.NewRat(100, 1)))
		return cents, "", err
	case KindFlat:
		cents, ok := r.Amounts[currency]
		if !ok {
			return 0, WhyNoReward, nil
		}
		return cents, "", nil
	}
	return 0, "", fmt.Errorf("reward %d: kind %q is not known", r.ID, r.Kind)
}

// Holds reports whether every condition of the rule holds for the event.
func (r Rule) Holds(f Facts) bool {
	for _, c := range r.Conditions {
		if !c.holds(f) {
			return false
		}
	}
	return true
}

func (c Condition) holds(f Facts) bool {
	if c.Field == FieldSaleAmount {
		n, ok := integer(c.Value)
		if !ok {
			return false
		}
		switch c.Op {
		case OpEq:
			return f.Sale.AmountCents == n
		case OpNeq:
			return f.Sale.AmountCents != n
		case OpGte:
			return f.Sale.AmountCents >= n
		case OpLte:
			return f.Sale.AmountCents <= n
		}
		return false
	}
	var got string
	switch {
	case c.Field == FieldProductID:
		got = f.ProductID
	case c.Field == FieldCustomerCountry:
		got = f.CustomerCountry
	case c.Field == FieldCurrency:
		got = f.Sale.Currency
	case c.Field == FieldSaleType:
		got = f.SaleType()
	case strings.HasPrefix(c.Field, FieldMetadataPrefix):
		got = f.Metadata[strings.TrimPrefix(c.Field, FieldMetadataPrefix)]
	default:
		return false
	}
	switch c.Op {
	case OpEq:
		s, ok := c.Value.(string)
		return ok && got == s
	case OpNeq:
		s, ok := c.Value.(string)
		return ok && got != s
	case OpIn:
		return slices.Contains(stringList(c.Value), got)
	}
	return false
}

// integer reads a condition's integer value: an int64, an int, or a whole JSON number.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// stringList reads OpIn's value: a list of strings ([]string, or []any of strings as JSON decodes it).
func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

var (
	percentText = regexp.MustCompile(`^\d{1,3}(\.\d{1,2})?$`)
	metadataKey = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)
)

// CheckRule refuses a reward out of its rules, with the message the routes answer; currencies are the
// program's.
func CheckRule(r Rule, currencies []string) error {
	if !slices.Contains(Events, r.Event) {
		return fmt.Errorf("event must be one of %s", strings.Join(Events, ", "))
	}
	switch r.Kind {
	case KindPercent:
		if r.Event != EventSale {
			return fmt.Errorf("a percent reward pays for sales only: a %s reward is flat", r.Event)
		}
		p, ok := new(big.Rat).SetString(r.Percent)
		if !percentText.MatchString(r.Percent) || !ok || p.Sign() <= 0 || p.Cmp(big.NewRat(100, 1)) > 0 {
			return fmt.Errorf("value must be a percentage above 0 and at most 100, with at most 2 decimals")
		}
		if len(r.Amounts) > 0 {
			return fmt.Errorf("amounts are for flat rewards; a percent reward has a value")
		}
	case KindFlat:
		if len(r.Amounts) == 0 {
			return fmt.Errorf("amounts must name at least one currency, such as {\"USD\": 500}")
		}
		for c, cents := range r.Amounts {
			if !slices.Contains(currencies, c) {
				return fmt.Errorf("amounts: currency %s is not one of the program's (%s)", c, strings.Join(currencies, ", "))
			}
			if cents <= 0 || cents > MaxFlatCents {
				return fmt.Errorf("amounts: %s must be between 1 and %d minor units", c, int64(MaxFlatCents))
			}
		}
		if r.Percent != "" {
			return fmt.Errorf("value is for percent rewards; a flat reward has amounts")
		}
	default:
		return fmt.Errorf("type must be one of percent, flat")
	}
	if r.DurationMonths != nil && (r.Event != EventSale || *r.DurationMonths < 0 || *r.DurationMonths > MaxRewardMonths) {
		if r.Event != EventSale {
			return fmt.Errorf("duration_months is for sale rewards")
		}
		return fmt.Errorf("duration_months must be between 0 and %d, or null for every sale", MaxRewardMonths)
	}
	if r.DailyCap != 0 && (r.Event != EventClick || r.DailyCap < 1 || r.DailyCap > MaxDailyCap) {
		if r.Event != EventClick {
			return fmt.Errorf("daily_cap is for click rewards")
		}
		return fmt.Errorf("daily_cap must be between 1 and %d", MaxDailyCap)
	}
	if len(r.Conditions) > MaxConditions {
		return fmt.Errorf("conditions: at most %d", MaxConditions)
	}
	for i, c := range r.Conditions {
		if err := checkCondition(c, r.Event); err != nil {
			return fmt.Errorf("conditions[%d]: %w", i, err)
		}
	}
	return nil
}

// saleFields are the condition fields only a sale has.
var saleFields = []string{FieldProductID, FieldSaleAmount, FieldCurrency, FieldSaleType}

func checkCondition(c Condition, event string) error {
	known := c.Field == FieldCustomerCountry || slices.Contains(saleFields, c.Field) ||
		(strings.HasPrefix(c.Field, FieldMetadataPrefix) && metadataKey.MatchString(strings.TrimPrefix(c.Field, FieldMetadataPrefix)))
	if !known {
		return fmt.Errorf("field must be one of product_id, customer_country, sale_amount_cents, currency, sale_type or metadata.<key>")
	}
	if event != EventSale && c.Field != FieldCustomerCountry {
		return fmt.Errorf("field %s is a sale's; a %s reward's conditions read customer_country only", c.Field, event)
	}
	switch c.Op {
	case OpEq, OpNeq, OpIn, OpGte, OpLte:
	default:
		return fmt.Errorf("op must be one of eq, neq, in, gte, lte")
	}
	if c.Field == FieldSaleAmount {
		if c.Op == OpIn {
			return fmt.Errorf("sale_amount_cents takes eq, neq, gte or lte")
		}
		if _, ok := integer(c.Value); !ok {
			return fmt.Errorf("value must be an integer amount in minor units")
		}
		return nil
	}
	switch c.Op {
	case OpGte, OpLte:
		return fmt.Errorf("%s compares sale_amount_cents only; %s takes eq, neq or in", c.Op, c.Field)
	case OpIn:
		l := stringList(c.Value)
		if len(l) == 0 || len(l) > MaxInValues {
			return fmt.Errorf("value must be a list of 1 to %d strings", MaxInValues)
		}
		return nil
	}
	s, ok := c.Value.(string)
	if !ok || s == "" || len(s) > 200 {
		return fmt.Errorf("value must be a string of 1 to 200 characters")
	}
	if c.Field == FieldSaleType && s != SaleTypeNew && s != SaleTypeRecurring {
		return fmt.Errorf("sale_type is new or recurring")
	}
	return nil
}

// RuleOf is the interface's terms as the default group's sale reward: percent pays the customer's first
// sale only (duration 0), recurring percent every sale (within DurationMonths when set); the fixed types
// are flat, their rate in major units of each of currencies.
func RuleOf(t Terms, currencies []string) (Rule, error) {
	r := Rule{Event: EventSale, DurationMonths: t.DurationMonths}
	if !Recurring(t.Type) {
		r.DurationMonths = new(int)
	}
	switch t.Type {
	case Percent, RecurringPercent:
		r.Kind, r.Percent = KindPercent, trimDecimal(t.Rate)
	case Fixed, RecurringFixed:
		r.Kind, r.Amounts = KindFlat, make(map[string]int64, len(currencies))
		for _, c := range currencies {
			cents, err := Amount(t.Type, t.Rate, 0, c)
			if err != nil {
				return Rule{}, err
			}
			r.Amounts[c] = cents
		}
	default:
		return Rule{}, fmt.Errorf("commission type %q is not known", t.Type)
	}
	return r, nil
}
