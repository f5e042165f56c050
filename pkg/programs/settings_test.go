package programs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/programs"
)

// Rates are read exactly from the literal sent, each range boundary just inside and just outside.
func TestRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ctype, text string
		want        string
		err         error
	}{
		// Percent types: more than 0, at most 100.
		{"percent", "100", "100.0000", nil},
		{"percent", "100.0000", "100.0000", nil},
		{"percent", "100.0001", "", programs.ErrPercentRateTooHigh},
		{"recurring_percent", "100.0001", "", programs.ErrPercentRateTooHigh},
		{"percent", "99.9999", "99.9999", nil},
		{"percent", "150", "", programs.ErrPercentRateTooHigh},
		{"percent", "1e2", "100.0000", nil},
		{"percent", "1E+2", "100.0000", nil},
		{"percent", "1.000001e2", "", programs.ErrPercentRateTooHigh},
		{"percent", "0.0001", "0.0001", nil},
		{"percent", "0.00001", "", programs.ErrRateDecimals},
		{"percent", "0.0000001", "", programs.ErrRateDecimals},
		{"percent", "1e-5", "", programs.ErrRateDecimals},
		{"percent", "12.34500", "12.3450", nil}, // trailing zeros are not decimal places
		{"percent", "30", "30.0000", nil},
		{"percent", "0", "", programs.ErrRateNotPositive},
		{"percent", "0.0000", "", programs.ErrRateNotPositive},
		{"percent", "-0", "", programs.ErrRateNotPositive},
		{"percent", "-1", "", programs.ErrRateNotPositive},
		{"percent", "-0.00001", "", programs.ErrRateNotPositive},
		// Fixed types: more than 0, at most 1000000 major units.
		{"fixed", "1000000", "1000000.0000", nil},
		{"recurring_fixed", "1000000", "1000000.0000", nil},
		{"fixed", "1000000.0001", "", programs.ErrFixedRateTooHigh},
		{"fixed", "1000001", "", programs.ErrFixedRateTooHigh},
		{"fixed", "9999999", "", programs.ErrFixedRateTooHigh},
		{"fixed", "150", "150.0000", nil},
		{"fixed", "25.5", "25.5000", nil},
		{"fixed", "999999.9999", "999999.9999", nil},
		// What overflowed the column or rounded to zero.
		{"fixed", "1e15", "", programs.ErrFixedRateTooHigh},
		{"percent", "1e308", "", programs.ErrPercentRateTooHigh},
		{"fixed", "1e999999999999", "", programs.ErrFixedRateTooHigh},
		{"fixed", "1e-999999999999", "", programs.ErrRateDecimals},
		{"fixed", "0.1e-3", "0.0001", nil},
		{"fixed", "100000000000000000000000000000000.5", "", programs.ErrFixedRateTooHigh},
		{"percent", "100." + strings.Repeat("0", 5000) + "1", "", programs.ErrPercentRateTooHigh},
		{"percent", "99." + strings.Repeat("9", 5000), "", programs.ErrRateDecimals},
		// Not numbers.
		{"percent", "", "", programs.ErrRateNotPositive},
		{"percent", "abc", "", programs.ErrRateNotPositive},
		{"percent", "1.", "", programs.ErrRateNotPositive},
		{"percent", ".5", "", programs.ErrRateNotPositive},
		{"percent", "1e", "", programs.ErrRateNotPositive},
		{"percent", "0x10", "", programs.ErrRateNotPositive},
		{"percent", "NaN", "", programs.ErrRateNotPositive},
	}
	for _, tt := range tests {
		got, err := programs.Rate(tt.ctype, tt.text)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("Rate(%s, %.40q) = %q, %v; want %q, %v", tt.ctype, tt.text, got, err, tt.want, tt.err)
		}
	}
	var typeErr *programs.CommissionTypeError
	if _, err := programs.Rate("tiered", "5"); !errors.As(err, &typeErr) || typeErr.Type != "tiered" {
		t.Errorf("unknown type: %v", err)
	}
}

func TestDomain(t *testing.T) {
	t.Parallel()
	label63 := strings.Repeat("a", 63)
	long := strings.Repeat(label63+".", 3) + strings.Repeat("b", 61) // 253 characters
	for in, want := range map[string]string{
		"shop.example.com":          "shop.example.com",
		"https://shop.example.com/": "shop.example.com",
		"http://shop.example.com":   "shop.example.com",
		"Shop.Example.COM":          "shop.example.com",
		"localhost":                 "localhost",
		"127.0.0.1":                 "127.0.0.1",
		"xn--bcher-kva.de":          "xn--bcher-kva.de",
		"a-b.c":                     "a-b.c",
		label63 + ".com":            label63 + ".com",
		long:                        long,
	} {
		if got, err := programs.Domain(in); got != want || err != nil {
			t.Errorf("Domain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"", "not a domain", "https://x.com/path", "x.com/path", "x.com?q=1", "x.com:8080", "https://x.com:443/",
		" x.com", "x.com ", "x..com", ".x.com", "x.com.", "-x.com", "x-.com", "x_y.com", "bücher.de", "https://", "/",
		"ftp://x.com", "HTTPS://x.com", "https://http://x.com", "x.com//", label63 + "a.com", long + "b", "x.com\x00",
		"user@x.com", "[::1]", "x.com#top",
	} {
		if got, err := programs.Domain(bad); !errors.Is(err, programs.ErrDomain) {
			t.Errorf("Domain(%q) = %q, %v; want ErrDomain", bad, got, err)
		}
	}
}

func TestNormaliseOrigin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://shop.example.com":        "https://shop.example.com",
		"https://WWW.Shop.example.com/":   "https://www.shop.example.com",
		"http://localhost:3000":           "http://localhost:3000",
		"http://127.0.0.1:8080/":          "http://127.0.0.1:8080",
		"http://[::1]:3000":               "http://[::1]:3000",
		"https://[2001:DB8::1]":           "https://[2001:db8::1]",
		"https://shop.example.com:65535":  "https://shop.example.com:65535",
		"https://shop.example.com:1":      "https://shop.example.com:1",
		"https://xn--bcher-kva.de":        "https://xn--bcher-kva.de",
		"http://a":                        "http://a",
		"https://a-b.example.com:443/":    "https://a-b.example.com:443",
		"http://shop.example.com:8080/":   "http://shop.example.com:8080",
		"https://sub.sub.shop.example.co": "https://sub.sub.shop.example.co",
	} {
		if got, err := programs.NormaliseOrigin(in); got != want || err != nil {
			t.Errorf("NormaliseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"", "shop.example.com", "localhost:8080", "https://a.example/path", "https://a.example//", "https://a.example?x=1",
		"https://a.example#f", "ftp://a.example", "HTTPS://a.example", "https://user@a.example", "https://a.example:",
		"https://a.example:0", "https://a.example:65536", "https://a.example:080", "https://a.example:8o", "https://:80",
		"https://a b.example", "https://a_b.example", "https://[::1", "https://[1.2.3.4]", "https://[::1]x", "https://[fe80::1%25en0]",
		"https://a.example:1:2", "https://a%2Eexample", "null", "https://bücher.de", "https:///", "https://a.example.",
	} {
		if got, err := programs.NormaliseOrigin(bad); !errors.Is(err, programs.ErrOrigin) {
			t.Errorf("NormaliseOrigin(%q) = %q, %v; want ErrOrigin", bad, got, err)
		}
	}
}

func TestWindowsAndDuration(t *testing.T) {
	t.Parallel()
	for days, ok := range map[int64]bool{0: false, 1: true, 60: true, 3650: true, 3651: false, -1: false} {
		var we *programs.WindowError
		if err := programs.CheckWindow("attribution_window_days", days); (err == nil) != ok ||
			(!ok && (!errors.As(err, &we) || we.Field != "attribution_window_days")) {
			t.Errorf("CheckWindow(%d) = %v", days, err)
		}
	}
	if m, err := programs.DurationMonths(0); m != nil || err != nil {
		t.Errorf("0 months = %v, %v; want lifetime (nil)", m, err)
	}
	for _, v := range []int64{1, 12, 1200} {
		if m, err := programs.DurationMonths(v); m == nil || int64(*m) != v || err != nil {
			t.Errorf("%d months = %v, %v", v, m, err)
		}
	}
	for _, v := range []int64{-1, 1201} {
		if _, err := programs.DurationMonths(v); !errors.Is(err, programs.ErrDurationMonths) {
			t.Errorf("%d months: %v", v, err)
		}
	}
}

// Create and Apply check the same rules; a refusal stores nothing.
func TestCreateAndApplyCheckTheRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, p := shop(t)
	account, ws := workspace(t, d, "other@example.com")
	base := programs.New{WorkspaceID: ws, Name: "Ranges", Domain: "ranges.example.com", CommissionType: "percent", CommissionRate: "20",
		CreatedBy: account}
	for name, tc := range map[string]struct {
		edit func(*programs.New)
		err  error
	}{
		"percent rate":    {func(n *programs.New) { n.CommissionRate = "100.5" }, programs.ErrPercentRateTooHigh},
		"fixed rate":      {func(n *programs.New) { n.CommissionType, n.CommissionRate = "fixed", "1000001" }, programs.ErrFixedRateTooHigh},
		"decimals":        {func(n *programs.New) { n.CommissionRate = "0.00001" }, programs.ErrRateDecimals},
		"zero rate":       {func(n *programs.New) { n.CommissionRate = "0" }, programs.ErrRateNotPositive},
		"domain":          {func(n *programs.New) { n.Domain = "https://x.com/path" }, programs.ErrDomain},
		"origin":          {func(n *programs.New) { n.AllowedOrigins = []string{"https://ok.example", "localhost:8080"} }, programs.ErrOrigin},
		"cookie window":   {func(n *programs.New) { v := int64(3651); n.CookieWindowDays = &v }, &programs.WindowError{}},
		"duration months": {func(n *programs.New) { v := int64(1201); n.DurationMonths = &v }, programs.ErrDurationMonths},
	} {
		n := base
		tc.edit(&n)
		_, _, err := programs.Create(ctx, d.DB, n)
		var we *programs.WindowError
		if _, isWindow := tc.err.(*programs.WindowError); (isWindow && !errors.As(err, &we)) || (!isWindow && !errors.Is(err, tc.err)) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.err)
		}
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM programs WHERE workspace_id = $1`, ws); err != nil || n != 0 {
		t.Errorf("refused programs stored: %d, %v", n, err)
	}

	// Normalised on the way in; duration 0 is lifetime.
	good := base
	zero, days := int64(0), int64(3650)
	good.Domain, good.CommissionRate, good.DurationMonths, good.CookieWindowDays = "https://Ranges.Example.com/", "1e2", &zero, &days
	good.AllowedOrigins = []string{"HTTP://nope"}
	if _, _, err := programs.Create(ctx, d.DB, good); !errors.Is(err, programs.ErrOrigin) {
		t.Errorf("upper-case scheme: %v", err)
	}
	good.AllowedOrigins = []string{"https://Ranges.example.com/"}
	created, _, err := programs.Create(ctx, d.DB, good)
	if err != nil || created.Domain != "ranges.example.com" || created.CommissionRate != "100.0000" || created.DurationMonths != nil ||
		created.CookieWindowDays != 3650 || created.AllowedOrigins[0] != "https://ranges.example.com" {
		t.Fatalf("created = %+v, %v", created, err)
	}

	// Apply: the rate must fit the type the program ends up with.
	before, err := programs.Get(ctx, d.DB, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	num := func(v int64) *int64 { return &v }
	for name, tc := range map[string]struct {
		u   programs.Update
		err error
	}{
		"percent above 100":              {programs.Update{CommissionRate: str("100.0001")}, programs.ErrPercentRateTooHigh},
		"fixed to percent, rate too big": {programs.Update{CommissionType: str("percent"), CommissionRate: str("150")}, programs.ErrPercentRateTooHigh},
		"decimals":                       {programs.Update{Name: str("changed"), CommissionRate: str("1.23456")}, programs.ErrRateDecimals},
		"domain":                         {programs.Update{Name: str("changed"), Domain: str("not a domain")}, programs.ErrDomain},
		"origins":                        {programs.Update{AllowedOrigins: &[]string{"https://x.com/path"}}, programs.ErrOrigin},
		"duration":                       {programs.Update{DurationMonths: num(-1)}, programs.ErrDurationMonths},
	} {
		if _, err := programs.Apply(ctx, d.DB, p.ID, tc.u); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", name, err, tc.err)
		}
	}
	var we *programs.WindowError
	if _, err := programs.Apply(ctx, d.DB, p.ID, programs.Update{CookieWindowDays: num(10), AttributionWindowDays: num(0)}); !errors.As(err, &we) ||
		we.Field != "attribution_window_days" {
		t.Errorf("attribution window 0: %v", err)
	}
	after, err := programs.Get(ctx, d.DB, p.ID)
	if err != nil || after.UpdatedAt != before.UpdatedAt || after.Name != before.Name || after.CookieWindowDays != before.CookieWindowDays ||
		after.CommissionRate != before.CommissionRate || after.Domain != before.Domain {
		t.Errorf("refused updates changed the program: %+v → %+v", before, after)
	}

	// Only the type changes: the stored rate (20) fits fixed; 500 fixed does not fit percent.
	if got, err := programs.Apply(ctx, d.DB, p.ID, programs.Update{CommissionType: str("fixed")}); err != nil || got.CommissionType != "fixed" ||
		got.CommissionRate != "20.0000" {
		t.Errorf("type change: %+v, %v", got, err)
	}
	if _, err := programs.Apply(ctx, d.DB, p.ID, programs.Update{CommissionRate: str("500")}); err != nil {
		t.Fatal(err)
	}
	if _, err := programs.Apply(ctx, d.DB, p.ID, programs.Update{CommissionType: str("recurring_percent")}); !errors.Is(err, programs.ErrPercentRateTooHigh) {
		t.Errorf("percent type with a rate of 500: %v", err)
	}
	got, err := programs.Apply(ctx, d.DB, p.ID, programs.Update{Domain: str("http://New.example.com/"), DurationMonths: num(12),
		AttributionWindowDays: num(3650)})
	if err != nil || got.Domain != "new.example.com" || got.DurationMonths == nil || *got.DurationMonths != 12 || got.AttributionWindowDays != 3650 {
		t.Errorf("update = %+v, %v", got, err)
	}
	if got, err := programs.Apply(ctx, d.DB, p.ID, programs.Update{DurationMonths: num(0)}); err != nil || got.DurationMonths != nil {
		t.Errorf("duration 0 = %+v, %v; want lifetime", got.DurationMonths, err)
	}
	if _, err := programs.Apply(ctx, d.DB, 999999, programs.Update{Name: str("x")}); !errors.Is(err, programs.ErrNotFound) {
		t.Errorf("unknown program: %v", err)
	}
}

// The ledger's settings: each boundary accepted, one past it refused.
func TestLedgerSettingsRanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"hold 0", programs.CheckHoldDays(0), nil},
		{"hold 365", programs.CheckHoldDays(365), nil},
		{"hold -1", programs.CheckHoldDays(-1), programs.ErrHoldDays},
		{"hold 366", programs.CheckHoldDays(366), programs.ErrHoldDays},
		{"auto", programs.CheckApproval("auto"), nil},
		{"manual", programs.CheckApproval("manual"), nil},
		{"Auto", programs.CheckApproval("Auto"), programs.ErrApproval},
		{"empty", programs.CheckApproval(""), programs.ErrApproval},
		{"minimum 0", programs.CheckPayoutMinimum(0), nil},
		{"minimum 10^9", programs.CheckPayoutMinimum(1_000_000_000), nil},
		{"minimum -1", programs.CheckPayoutMinimum(-1), programs.ErrPayoutMinimum},
		{"minimum 10^9+1", programs.CheckPayoutMinimum(1_000_000_001), programs.ErrPayoutMinimum},
	} {
		if !errors.Is(tc.err, tc.want) || (tc.want == nil && tc.err != nil) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}
