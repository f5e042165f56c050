package commission

import (
	"fmt"
	"strconv"
	"strings"
)

// Describe tells terms in words, the one sentence the dashboard, the partner portal, the invitation mail
// and an open program's page all show: what a sale pays, for how long, how commissions are held and
// approved, and from what amount they are paid out (minimumCents in each of currencies' minor units).
//
//	Pays 30% of every sale of a customer for 12 months after their first. Commissions are held 30 days,
//	then approved automatically. Payouts from 50.00 USD, 50.00 EUR or 5000 VND.
func Describe(t Terms, minimumCents int64, currencies []string) string {
	var b strings.Builder
	b.WriteString("Pays ")
	rate := trimDecimal(t.Rate)
	switch t.Type {
	case Percent, RecurringPercent:
		b.WriteString(rate + "% of ")
	default:
		b.WriteString(rate + " in the sale's currency for ")
	}
	if Recurring(t.Type) {
		b.WriteString("every sale of a customer")
		if t.DurationMonths != nil && *t.DurationMonths > 0 {
			b.WriteString(" for " + plural(*t.DurationMonths, "month") + " after their first")
		}
	} else {
		b.WriteString("a customer's first sale")
	}
	b.WriteString(". ")
	how := "by the brand"
	if t.Approval == ApprovalAuto {
		how = "automatically"
	}
	if t.HoldDays > 0 {
		b.WriteString("Commissions are held " + plural(t.HoldDays, "day") + ", then approved " + how + ". ")
	} else {
		b.WriteString("Commissions are not held and are approved " + how + ". ")
	}
	if minimumCents <= 0 || len(currencies) == 0 {
		b.WriteString("Payouts of any amount.")
		return b.String()
	}
	amounts := make([]string, 0, len(currencies))
	for _, c := range currencies {
		amounts = append(amounts, FormatAmount(minimumCents, c)+" "+c)
	}
	b.WriteString("Payouts from " + joinOr(amounts) + ".")
	return b.String()
}

// FormatAmount writes cents minor units of currency in major units with the currency's exponent: 1250
// USD is "12.50", 125000 VND "125000". Never through a float.
func FormatAmount(cents int64, currency string) string {
	exp, _ := Exponent(currency)
	if exp == 0 {
		return strconv.FormatInt(cents, 10)
	}
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	s := fmt.Sprintf("%0*d", exp+1, cents)
	return sign + s[:len(s)-exp] + "." + s[len(s)-exp:]
}

// trimDecimal drops a decimal's trailing zeros ("20.0000" → "20", "12.50" → "12.5").
func trimDecimal(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func joinOr(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
