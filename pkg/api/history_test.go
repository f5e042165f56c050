package api_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

const desktopUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36"

// Clicks are partitioned by month: a click's id and click_id name its month.
func TestClickIDsNameTheirMonth(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", desktopUA)
	if res.Status != http.StatusOK {
		t.Fatalf("click: %d %s", res.Status, res.Body)
	}
	clickID := res.JSON(t)["click_id"].(string)
	if !regexp.MustCompile(`^` + time.Now().UTC().Format("0601") + `[A-Za-z0-9_-]{22}$`).MatchString(clickID) {
		t.Errorf("click_id %q does not start with this month", clickID)
	}
	if n := env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND click_month = date_trunc('month', now() AT TIME ZONE 'UTC')::date
		AND clicks_ref_month(id) = click_month AND tableoid = to_regclass('clicks_' || to_char(click_month, 'YYYY_MM'))`, clickID); n != 1 {
		t.Errorf("the click is not in its month's partition with an id of that month (%d rows)", n)
	}
}

// Retention drops whole months but keeps what attribution needs: a customer's click is copied to
// clicks_kept, so the customer's later (recurring) sales keep their partner and the sale still names the
// click; a click nobody points at goes with its month.
func TestRetentionKeepsWhatAttributionNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apitest.New(t)
	r := env.Seed(seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"})
	// Each visitor with a browser of its own (a repeat visitor would get their earlier click back).
	click := func(browser string) string {
		t.Helper()
		res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL},
			"User-Agent", desktopUA+" "+browser)
		if res.Status != http.StatusOK {
			t.Fatalf("click: %d %s", res.Status, res.Body)
		}
		return res.JSON(t)["click_id"].(string)
	}
	kept, dropped := click("a/1"), click("b/1")
	if kept == dropped {
		t.Fatal("two visitors got one click")
	}
	if res := lead(env, map[string]any{"click_id": kept, "customer_key": "lifetime-1"}, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}

	// Drop everything before next month: this month's partition goes.
	now := time.Now()
	expired, err := clicks.Expire(ctx, env.DB.DB, now.AddDate(0, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	thisMonth := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	if len(expired) != 1 || !expired[0].Month.Equal(thisMonth) || expired[0].Kept != 1 {
		t.Fatalf("expired %+v, want this month with 1 click kept", expired)
	}
	if n := env.Count(`SELECT count(*) FROM clicks_kept WHERE click_id = $1`, kept); n != 1 {
		t.Error("the customer's click was not kept")
	}
	if n := env.Count(`SELECT count(*) FROM clicks`) + env.Count(`SELECT count(*) FROM clicks_kept WHERE click_id = $1`, dropped); n != 0 {
		t.Errorf("%d clicks left that nothing points at", n)
	}

	// The customer keeps buying: each sale is the partner's, on the kept click.
	for i, txn := range []string{"renewal-1", "renewal-2"} {
		res := sale(env, r.APIKey, map[string]any{"transaction_id": txn, "amount_cents": 1000, "customer_key": "lifetime-1"})
		if res.Status != http.StatusOK {
			t.Fatalf("sale %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	if n := env.Count(`SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id WHERE s.partner_id = $1
		AND s.click_id = $2 AND c.amount_cents = 100`, r.PartnerID, kept); n != 2 {
		t.Errorf("%d of 2 renewals paid the partner on the kept click", n)
	}
	if n := env.Count(`SELECT count(*) FROM clicks_kept WHERE click_id = $1 AND converted`, kept); n != 1 {
		t.Error("the kept click was not marked converted")
	}

	// The month is made again (the server does it every hour), and clicks land in it.
	if _, err := clicks.Prepare(ctx, env.DB.DB, now, clicks.PrepareAhead); err != nil {
		t.Fatal(err)
	}
	click("c/1")
}

// The cutoff never reaches into a program's cookie or attribution window.
func TestRetentionCutoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		retention, windowDays int
		want                  time.Time
	}{
		{0, 60, time.Time{}},
		{13, 60, time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)},
		{1, 60, time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},   // 60 days back is September 26th
		{2, 400, time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)}, // 400 days back is October 21st, 2025
	} {
		if _, err := env.DB.Exec(`UPDATE programs SET cookie_window_days = $1, attribution_window_days = 30 WHERE id = $2`, c.windowDays, r.ProgramID); err != nil {
			t.Fatal(err)
		}
		got, err := clicks.Cutoff(ctx, env.DB.DB, now, c.retention)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("retention %d, window %d days: cutoff %v (%v), want %v", c.retention, c.windowDays, got, err, c.want)
		}
	}
}
