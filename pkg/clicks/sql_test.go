package clicks_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The calls this package makes take exactly the inputs its functions declare.
func TestCallsMatchTheirFunctions(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	for _, err := range []error{
		pgcall.Check(ctx, d.DB, clicks.RecordCall),
		pgcall.Check(ctx, d.DB, clicks.PrepareCall),
		pgcall.Check(ctx, d.DB, clicks.ExpireCall),
	} {
		if err != nil {
			t.Error(err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// clicks_record, called directly: each outcome of the click's rules, in their one order, and what a
// recorded click stores.
func TestRecordFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	const site = "https://shop.example.com"
	brand, err := seed.Run(ctx, d.DB, seed.Options{Origins: []string{site}})
	if err != nil {
		t.Fatal(err)
	}
	suspended, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := accounts.Suspend(ctx, d.DB, suspended.AccountEmail); err != nil {
		t.Fatal(err)
	}
	// Links of the brand's program: one turned off, one without a partner. One of the suspended program, off.
	if _, err := d.Exec(`INSERT INTO referral_links (short_link, partner_id, program_id, enabled) VALUES
		('off', $1, $2, false), ('nopartner', NULL, $2, true), ('suspended-off', $3, $4, false)`,
		brand.PartnerID, brand.ProgramID, suspended.PartnerID, suspended.ProgramID); err != nil {
		t.Fatal(err)
	}
	visitor := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	newID := func() string {
		id, err := clicks.NewClickID(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	click := func(aff, who string, origin *string, test bool) clicks.RecordInput {
		return clicks.RecordInput{Aff: aff, Visitor: visitor(who), Origin: origin, Test: test, ClickID: newID(),
			AffiliateURL: ptr(site + "/?aff=" + aff)}
	}
	record := func(repeatSeconds int64, in ...clicks.RecordInput) []clicks.RecordRow {
		t.Helper()
		var rows []clicks.RecordRow
		if err := clicks.RecordCall.Select(ctx, d.DB, &rows, in, clicks.RecordFixed{RepeatSeconds: repeatSeconds}); err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(in) {
			t.Fatalf("%d rows for %d clicks", len(rows), len(in))
		}
		slices.SortFunc(rows, func(a, b clicks.RecordRow) int { return cmp.Compare(a.Ord, b.Ord) })
		return rows
	}

	first := click(brand.ShortLink, "ada", nil, false)
	first.UserAgent, first.IP, first.DeviceType = ptr("Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0"), ptr("203.0.113.7"), ptr("desktop")
	cases := []struct {
		name string
		in   clicks.RecordInput
		want string
	}{
		{"a click without Origin", first, "recorded"},
		{"unknown link", click("nosuch", "ada", nil, false), "link_not_found"},
		{"link without partner", click("nopartner", "ada", nil, false), "link_misconfigured"},
		{"suspended owner (before the link's switch)", click("suspended-off", "ada", nil, false), "owner_suspended"},
		{"suspended owner", click(suspended.ShortLink, "ada", nil, false), "owner_suspended"},
		{"origin not listed", click(brand.ShortLink, "bob", ptr("https://evil.example"), false), "origin_not_allowed"},
		{"origin not listed (before the link's switch)", click("off", "bob", ptr("https://evil.example"), false), "origin_not_allowed"},
		{"link turned off", click("off", "bob", ptr(site), false), "link_disabled"},
		{"a listed origin", click(brand.ShortLink, "bob", ptr(site), false), "recorded"},
		{"a test click", click(brand.ShortLink, "carol", nil, true), "recorded"},
	}
	var in []clicks.RecordInput
	for _, c := range cases {
		in = append(in, c.in)
	}
	rows := record(3600, in...)
	for i, c := range cases {
		r := rows[i]
		if r.Ord != int64(i+1) || r.Outcome != c.want {
			t.Errorf("%s: ord %d outcome %q, want ord %d %q", c.name, r.Ord, r.Outcome, i+1, c.want)
			continue
		}
		recorded := c.want == "recorded"
		if recorded != (r.ID != nil && r.ClickID != nil && *r.ClickID == c.in.ClickID) {
			t.Errorf("%s: click %v %v, want it recorded as %s: %v", c.name, r.ID, r.ClickID, c.in.ClickID, recorded)
		}
		if recorded && (r.ProgramID == nil || *r.ProgramID != brand.ProgramID || r.PartnerID == nil || *r.PartnerID != brand.PartnerID || r.CookieWindowDays == nil) {
			t.Errorf("%s: link facts %v %v %v", c.name, r.ProgramID, r.PartnerID, r.CookieWindowDays)
		}
	}
	// What the first click stored: its texts, NULL for what was not sent.
	var stored struct {
		UA      *string `db:"user_agent"`
		IP      *string `db:"ip"`
		Device  *string `db:"device_type"`
		Session *string `db:"session_id"`
		Bot     bool    `db:"is_bot"`
	}
	if err := d.Get(&stored, `SELECT user_agent, host(ip) AS ip, device_type, session_id, is_bot FROM clicks WHERE click_id = $1`, first.ClickID); err != nil {
		t.Fatal(err)
	}
	if stored.UA == nil || *stored.UA != *first.UserAgent || stored.IP == nil || *stored.IP != "203.0.113.7" ||
		stored.Device == nil || *stored.Device != "desktop" || stored.Session != nil || stored.Bot {
		t.Errorf("stored %+v", stored)
	}

	// Repeats: the same visitor on the same link in the same mode is answered with the earlier click.
	again := click(brand.ShortLink, "ada", nil, false)
	otherMode := click(brand.ShortLink, "ada", nil, true)
	otherVisitor := click(brand.ShortLink, "dan", nil, false)
	rows = record(3600, again, otherMode, otherVisitor)
	if rows[0].Outcome != "repeated" || rows[0].ClickID == nil || *rows[0].ClickID != first.ClickID || *rows[0].ID != *clickRef(t, d, first.ClickID) {
		t.Errorf("the same visitor again: %+v, want the first click %s", rows[0], first.ClickID)
	}
	if rows[1].Outcome != "recorded" || rows[2].Outcome != "recorded" {
		t.Errorf("another mode, another visitor: %q, %q; want both recorded", rows[1].Outcome, rows[2].Outcome)
	}
	// Outside the window the same visitor makes a new click.
	late := click(brand.ShortLink, "ada", nil, false)
	if rows := record(0, late); rows[0].Outcome != "recorded" || *rows[0].ClickID != late.ClickID {
		t.Errorf("after the window: %+v, want recorded", rows[0])
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM clicks`); err != nil || n != 6 {
		t.Errorf("clicks stored = %d, %v; want 6 (3 + 2 + 1)", n, err)
	}
}

// clickRef is the row id of the click with click_id.
func clickRef(t *testing.T, d *dbtest.Database, clickID string) *int64 {
	t.Helper()
	var id int64
	if err := d.Get(&id, `SELECT id FROM clicks WHERE click_id = $1`, clickID); err != nil {
		t.Fatal(err)
	}
	return &id
}

// The month functions and partition upkeep, called directly: clicks_month reads a click_id's month (none
// for an id without one); clicks_prepare makes months once; clicks_expire drops the months before its
// cutoff, keeping the clicks something points at; clicks_convert marks clicks.
func TestMonthFunctions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	brand, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(clickID string) *time.Time {
		t.Helper()
		var m *time.Time
		if err := d.Get(&m, `SELECT clicks_month($1)`, clickID); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := lookup("2602VLdvuE52RWYhrO8NdnO0mA"); m == nil || !m.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("month of a 2602 click id = %v, want 2026-02-01", m)
	}
	for _, id := range []string{"2613VLdvuE52RWYhrO8NdnO0mA", "legacy-id", "2602short"} {
		if m := lookup(id); m != nil {
			t.Errorf("month of %q = %v, want none", id, m)
		}
	}

	prepare := func(from string, months int32) int {
		t.Helper()
		var made int
		if err := d.Get(&made, clicks.PrepareCall.Query(), clicks.PrepareCall.Args(nil, clicks.PrepareInput{From: from, Months: months})...); err != nil {
			t.Fatal(err)
		}
		return made
	}
	if made := prepare("2020-01-15", 2); made != 2 {
		t.Errorf("clicks_prepare from 2020-01 for 2 months made %d, want 2", made)
	}
	if made := prepare("2020-02-01", 2); made != 1 {
		t.Errorf("clicks_prepare again over 2020-02..03 made %d, want 1 (02 exists)", made)
	}

	// Two clicks in January 2020: one a customer points at, one nobody does.
	var kept, dropped int64
	if err := d.Get(&kept, `INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, affiliate_url, click_timestamp)
		VALUES (clicks_make_id('2020-01-01', 1), '2020-01-01', '2001VLdvuE52RWYhrO8NdnO0mA', $1, $2, $3, 'x', '2020-01-10') RETURNING id`,
		brand.ProgramID, brand.LinkID, brand.PartnerID); err != nil {
		t.Fatal(err)
	}
	if err := d.Get(&dropped, `INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, affiliate_url, click_timestamp)
		VALUES (clicks_make_id('2020-01-01', 2), '2020-01-01', '2001kFq3Yd2cT8XbNw1Lz5R0vA', $1, $2, $3, 'x', '2020-01-11') RETURNING id`,
		brand.ProgramID, brand.LinkID, brand.PartnerID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO customers (program_id, customer_key, click_ref, partner_id, status) VALUES ($1, 'k', $2, $3, 'lead')`,
		brand.ProgramID, kept, brand.PartnerID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`SELECT clicks_convert(ARRAY[$1::bigint])`, kept); err != nil {
		t.Fatal(err)
	}
	var expired []clicks.Expired
	if err := clicks.ExpireCall.Select(ctx, d.DB, &expired, nil, clicks.ExpireInput{Before: "2020-02-01"}); err != nil {
		t.Fatal(err)
	}
	if len(expired) != 1 || !expired[0].Month.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) || expired[0].Kept != 1 {
		t.Errorf("clicks_expire before 2020-02 = %+v, want January dropped with 1 kept", expired)
	}
	var keptConverted bool
	if err := d.Get(&keptConverted, `SELECT converted FROM clicks_kept WHERE id = $1`, kept); err != nil || !keptConverted {
		t.Errorf("the kept click: converted %v, %v; want it kept, converted", keptConverted, err)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM clicks_kept WHERE id = $1`, dropped); err != nil || n != 0 {
		t.Errorf("the unreferenced click kept: %d, %v", n, err)
	}
	if made := prepare("2020-02-01", 1); made != 0 {
		t.Errorf("February was dropped too: clicks_prepare made %d", made)
	}
}
