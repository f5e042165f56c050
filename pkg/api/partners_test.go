package api_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/secret"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Partners' enrollments and invitations (docs/rules.md#partners), through the real server: every answer is
// checked against the spec by apitest.

// enrollmentOf is the path of a partner's enrollment action (approve, reject, ban) in the fixture's program.
func (f *ledgerFixture) enrollmentOf(partnerID any, action string) string {
	return fmt.Sprintf("%s/partners/%v/%s", f.base, partnerID, action)
}

// invitation is the path of one of the program's invitations.
func (f *ledgerFixture) invitation(id any) string {
	return fmt.Sprintf("%s/invitations/%v", f.base, id)
}

// addPartner adds a partner by POST /partners and returns it as the answer shows it.
func (f *ledgerFixture) addPartner(name, email string) map[string]any {
	f.t.Helper()
	return f.data(f.do(http.MethodPost, f.base+"/partners", map[string]any{"name": name, "email": email}), http.StatusCreated)
}

// addLink makes a referral link for the partner and returns it.
func (f *ledgerFixture) addLink(partnerID any) map[string]any {
	f.t.Helper()
	return f.data(f.do(http.MethodPost, f.base+"/links", map[string]any{"partner_id": partnerID}), http.StatusCreated)
}

// applied puts the partner's enrollment at pending, as an application on the program's page leaves it
// (that page is not part of these routes).
func (f *ledgerFixture) applied(partnerID any) {
	f.t.Helper()
	if _, err := f.env.DB.Exec(`UPDATE partner_programs SET status = 'pending' WHERE program_id = $1 AND partner_id = $2`,
		f.r.ProgramID, partnerID); err != nil {
		f.t.Fatal(err)
	}
}

// listedPartners are the program's partners as GET /partners shows them, by id.
func (f *ledgerFixture) listedPartners() map[int64]map[string]any {
	f.t.Helper()
	out := map[int64]map[string]any{}
	for _, p := range f.list(f.do(http.MethodGet, f.base+"/partners", nil), http.StatusOK) {
		out[int64(p["id"].(float64))] = p
	}
	return out
}

// invite invites by POST /invitations with body and returns the invitations made.
func (f *ledgerFixture) invite(body any) []map[string]any {
	f.t.Helper()
	return f.list(f.do(http.MethodPost, f.base+"/invitations", body), http.StatusCreated)
}

// idOf is a JSON id as an int64.
func idOf(v map[string]any) int64 { return int64(v["id"].(float64)) }

func stats(clicks, leads, sales float64) map[string]any {
	return map[string]any{"clicks": clicks, "leads": leads, "sales": sales}
}

// The enrollment's transitions: invited, pending → approved | rejected, approved → banned; each refusal
// answers its documented 409 word for word and changes nothing; stats count the partner's real events.
func TestPartnerEnrollment(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)

	// 201: a partner the brand adds is approved, with no events yet.
	ann := f.addPartner("Ann", "ann@example.com")
	annID := idOf(ann)
	want := map[string]any{"id": ann["id"], "name": "Ann", "email": "ann@example.com", "program_id": float64(f.r.ProgramID),
		"partner_program_id": ann["partner_program_id"], "synthetic": false, "created_at": ann["created_at"], "status": "approved",
		"status_reason": nil, "stats": stats(0, 0, 0), "is_test": false}
	if diff := cmp.Diff(want, ann); diff != "" {
		t.Errorf("added partner (-want +got):\n%s", diff)
	}

	// Stats: real clicks (not bots nor test clicks), settled leads and sales, by partner.
	annURL := f.addLink(annID)["referral_url"].(string)
	for _, ua := range []string{chromeUA, "Twitterbot/1.0"} {
		if res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": annURL}, "User-Agent", ua); res.Status != http.StatusOK {
			t.Fatalf("click: %d %s", res.Status, res.Body)
		}
	}
	if res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": annURL, "additional_data": map[string]any{"test_mode": true}},
		"User-Agent", "test-click"); res.Status != http.StatusOK {
		t.Fatalf("test click: %d %s", res.Status, res.Body)
	}
	f.sale("stats-1", 5000, "USD", annURL) // a click, a lead and a sale
	customerWithLead(t, f.env, f.r, "seeded-lead-only")
	// A visitor of Ann's leaves a provisional lead (the browser's): the click counts, the lead does not.
	visit := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": annURL}, "User-Agent", "ua-provisional")
	if visit.Status != http.StatusOK {
		t.Fatalf("click: %d %s", visit.Status, visit.Body)
	}
	if res := lead(f.env, map[string]any{"click_id": visit.JSON(t)["click_id"]}); res.Status != http.StatusOK || res.JSON(t)["provisional"] != true {
		t.Fatalf("provisional lead: %d %s", res.Status, res.Body)
	}
	listed := f.listedPartners()
	if len(listed) != 2 {
		t.Fatalf("listed %v, want the seeded partner and Ann", listed)
	}
	if got := listed[annID]; got["status"] != "approved" || !cmp.Equal(got["stats"], stats(3, 1, 1)) {
		t.Errorf("Ann listed as %v, want approved with 3 clicks, 1 lead (the provisional one counts nowhere), 1 sale", got)
	}
	if got := listed[f.r.PartnerID]; got["status"] != "approved" || got["status_reason"] != nil || !cmp.Equal(got["stats"], stats(1, 1, 0)) {
		t.Errorf("the seeded partner listed as %v, want approved with 1 click, 1 lead", got)
	}

	// 200: approving an approved partner answers them unchanged, and writes nothing.
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(annID, "approve"), nil), http.StatusOK); !cmp.Equal(got, listed[annID]) {
		t.Errorf("approve approved = %v, want %v", got, listed[annID])
	}

	// An application (pending): approved, or rejected with a reason, or without one.
	pia, rex, pat := idOf(f.addPartner("Pia", "pia@example.com")), idOf(f.addPartner("Rex", "rex@example.com")), idOf(f.addPartner("Pat", "pat@example.com"))
	for _, p := range []int64{pia, rex, pat} {
		f.applied(p)
	}
	if got := f.listedPartners()[pia]; got["status"] != "pending" {
		t.Errorf("applied partner listed as %v", got)
	}
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(pia, "approve"), nil), http.StatusOK); got["status"] != "approved" || got["status_reason"] != nil {
		t.Errorf("approved = %v", got)
	}
	rejected := f.data(f.do(http.MethodPost, f.enrollmentOf(rex, "reject"), map[string]any{"reason": "Not a fit for our audience"}), http.StatusOK)
	if rejected["status"] != "rejected" || rejected["status_reason"] != "Not a fit for our audience" {
		t.Errorf("rejected = %v", rejected)
	}
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(rex, "reject"), map[string]any{"reason": "another"}), http.StatusOK); !cmp.Equal(got, rejected) {
		t.Errorf("rejecting again = %v, want it unchanged %v", got, rejected)
	}
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(pat, "reject"), nil), http.StatusOK); got["status"] != "rejected" || got["status_reason"] != nil {
		t.Errorf("rejected without a reason = %v", got)
	}

	// The ban, with its reason; banning again answers the partner unchanged.
	banned := f.data(f.do(http.MethodPost, f.enrollmentOf(annID, "ban"), map[string]any{"reason": "Cookie stuffing"}), http.StatusOK)
	if banned["status"] != "banned" || banned["status_reason"] != "Cookie stuffing" || !cmp.Equal(banned["stats"], stats(3, 1, 1)) {
		t.Errorf("banned = %v", banned)
	}
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(annID, "ban"), map[string]any{"reason": "again"}), http.StatusOK); !cmp.Equal(got, banned) {
		t.Errorf("banning again = %v, want it unchanged %v", got, banned)
	}
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(annID, "ban"), nil), http.StatusOK); !cmp.Equal(got, banned) {
		t.Errorf("banning again without a body = %v", got)
	}

	// An invited partner (an invitation is out).
	ivy := int64(f.invite(map[string]any{"email": "ivy@example.com"})[0]["partner_id"].(float64))

	// 409: each status a transition does not start from, word for word.
	for _, tc := range []struct {
		partner int64
		action  string
		message string
	}{
		{ivy, "approve", fmt.Sprintf("Partner %d is invited: the enrollment is approved when they accept the invitation", ivy)},
		{rex, "approve", fmt.Sprintf("Partner %d was rejected", rex)},
		{annID, "approve", fmt.Sprintf("Partner %d is banned", annID)},
		{ivy, "reject", fmt.Sprintf("Partner %d is invited: only an application can be rejected", ivy)},
		{pia, "reject", fmt.Sprintf("Partner %d is approved: only an application can be rejected", pia)},
		{annID, "reject", fmt.Sprintf("Partner %d is banned: only an application can be rejected", annID)},
		{ivy, "ban", fmt.Sprintf("Partner %d is invited: only an approved partner can be banned", ivy)},
		{rex, "ban", fmt.Sprintf("Partner %d is rejected: only an approved partner can be banned", rex)},
	} {
		t.Run(fmt.Sprintf("409 %s %d", tc.action, tc.partner), func(t *testing.T) {
			before := f.listedPartners()[tc.partner]
			platformError(t, f.do(http.MethodPost, f.enrollmentOf(tc.partner, tc.action), map[string]any{"reason": "r"}), http.StatusConflict,
				"ConflictError", tc.message)
			if after := f.listedPartners()[tc.partner]; !cmp.Equal(before, after) {
				t.Errorf("a refused %s changed the partner: %v → %v", tc.action, before, after)
			}
		})
	}
	pending := idOf(f.addPartner("Pen", "pen@example.com"))
	f.applied(pending)
	platformError(t, f.do(http.MethodPost, f.enrollmentOf(pending, "ban"), nil), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Partner %d is pending: only an approved partner can be banned", pending))

	// 400: a reason blank (the route's words), empty or too long (the spec's validator, as for a
	// commission's rejection); nothing changes.
	for _, tc := range []struct {
		name, action string
		partner      int64
		body         any
		message      string
	}{
		{"reject blank", "reject", pending, map[string]any{"reason": "   "}, "reason must be 1 to 500 characters"},
		{"reject empty", "reject", pending, map[string]any{"reason": ""}, "Invalid request body: reason: minimum string length is 1"},
		{"reject 501", "reject", pending, map[string]any{"reason": strings.Repeat("é", 501)}, "Invalid request body: reason: maximum string length is 500"},
		{"reject a number", "reject", pending, `{"reason":5}`, "Invalid request body: reason: value must be a string"},
		{"ban blank", "ban", pia, map[string]any{"reason": "\t\n"}, "reason must be 1 to 500 characters"},
		{"ban empty", "ban", pia, map[string]any{"reason": ""}, "Invalid request body: reason: minimum string length is 1"},
		{"ban 501", "ban", pia, map[string]any{"reason": strings.Repeat("x", 501)}, "Invalid request body: reason: maximum string length is 500"},
	} {
		t.Run("400 "+tc.name, func(t *testing.T) {
			before := f.listedPartners()[tc.partner]
			platformError(t, f.do(http.MethodPost, f.enrollmentOf(tc.partner, tc.action), tc.body), http.StatusBadRequest, "BadRequestError", tc.message)
			if after := f.listedPartners()[tc.partner]; !cmp.Equal(before, after) {
				t.Errorf("a refused %s changed the partner: %v → %v", tc.action, before, after)
			}
		})
	}
	// 500 characters (not bytes) are fine.
	long := strings.Repeat("é", 500)
	if got := f.data(f.do(http.MethodPost, f.enrollmentOf(pending, "reject"), map[string]any{"reason": long}), http.StatusOK); got["status_reason"] != long {
		t.Errorf("a 500-character reason: %v", got["status_reason"])
	}

	// 404: a partner of another program (another workspace's), or none.
	other := f.another()
	for _, action := range []string{"approve", "reject", "ban"} {
		platformError(t, f.do(http.MethodPost, f.enrollmentOf(other.r.PartnerID, action), nil), http.StatusNotFound, "NotFoundError", "Partner not found")
		platformError(t, f.do(http.MethodPost, f.enrollmentOf(999999, action), nil), http.StatusNotFound, "NotFoundError", "Partner not found")
	}
	if got := other.listedPartners()[other.r.PartnerID]; got["status"] != "approved" {
		t.Errorf("the other program's partner is now %v", got)
	}

	// The audit log: one entry per change, none for an answer unchanged or refused.
	for p, want := range map[int64][]string{annID: {"partner.ban"}, pia: {"partner.approve"}, rex: {"partner.reject"}, pat: {"partner.reject"},
		pending: {"partner.reject"}, ivy: {"partner.invite"}} {
		if got := f.audited(fmt.Sprintf("partner:%d", p)); !slices.Equal(got, want) {
			t.Errorf("audit of partner %d = %v, want %v", p, got, want)
		}
	}
	var detail string
	if err := f.env.DB.Get(&detail, `SELECT detail->>'reason' FROM audit_log WHERE action = 'partner.reject' AND target = $1`,
		fmt.Sprintf("partner:%d", rex)); err != nil || detail != "Not a fit for our audience" {
		t.Errorf("the rejection's reason in the audit log = %q (%v)", detail, err)
	}
}

// A ban turns the partner's links off for good and rejects their commissions not yet in a payout (and
// those of sales after it); one in a payout stays there; the balances still add up.
func TestPartnerBan(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0, "commission_approval": "manual"})
	annID := idOf(f.addPartner("Ann", "ann@example.com"))
	link1, link2 := f.addLink(annID), f.addLink(annID)
	annURL := link1["referral_url"].(string)

	// Ann's commissions: one in a payout, one approved, one pending, one partly refunded, one refunded in
	// full; the seeded partner's, pending.
	inPayout := f.sale("ban-1", 10000, "USD", annURL)["id"]
	f.data(f.do(http.MethodPost, commission(inPayout)+"/approve", nil), http.StatusOK)
	run := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)
	if len(run) != 1 || run[0]["partner_id"] != float64(annID) {
		t.Fatalf("payouts = %v", run)
	}
	approved := f.sale("ban-2", 10000, "USD", annURL)["id"]
	f.data(f.do(http.MethodPost, commission(approved)+"/approve", nil), http.StatusOK)
	pending := f.sale("ban-3", 10000, "USD", annURL)["id"]
	partly := f.sale("ban-4", 10000, "USD", annURL)["id"]
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "ban-4", "refund_amount_cents": 2500}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	reversed := f.sale("ban-5", 10000, "USD", annURL)["id"]
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "ban-5"}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	seeded := f.sale("ban-seeded", 10000, "USD", "")["id"]
	// A customer of Ann's, who buys after the ban.
	late := f.r
	late.AffiliateURL = annURL
	customerWithLead(t, f.env, late, "cust-late")
	statuses := func() map[any]string {
		out := map[any]string{}
		for _, c := range []any{inPayout, approved, pending, partly, reversed, seeded} {
			out[c] = f.data(f.do(http.MethodGet, commission(c), nil), http.StatusOK)["status"].(string)
		}
		return out
	}
	if got, want := statuses(), map[any]string{inPayout: "in_payout", approved: "approved", pending: "pending", partly: "pending",
		reversed: "reversed", seeded: "pending"}; !cmp.Equal(got, want) {
		t.Fatalf("before the ban: %v, want %v", got, want)
	}
	f.conserved()

	banned := f.data(f.do(http.MethodPost, f.enrollmentOf(annID, "ban"), map[string]any{"reason": "Cookie stuffing"}), http.StatusOK)
	if banned["status"] != "banned" || banned["status_reason"] != "Cookie stuffing" {
		t.Fatalf("banned = %v", banned)
	}

	// The commissions not yet in a payout are rejected, with the reason; the rest stay.
	if got, want := statuses(), map[any]string{inPayout: "in_payout", approved: "rejected", pending: "rejected", partly: "rejected",
		reversed: "reversed", seeded: "pending"}; !cmp.Equal(got, want) {
		t.Errorf("after the ban: %v, want %v", got, want)
	}
	for _, c := range []any{approved, pending, partly} {
		got := f.data(f.do(http.MethodGet, commission(c), nil), http.StatusOK)
		if got["rejected_reason"] != "partner banned" || got["payable_cents"] != 0.0 {
			t.Errorf("commission %v after the ban = %v", c, got)
		}
	}

	// The links are off: the click route answers 410 link_disabled; neither can be turned on again, nor
	// a new one made; turning one off again is fine. The seeded partner's link still works.
	for _, l := range f.list(f.do(http.MethodGet, f.base+"/links", nil), http.StatusOK) {
		if want := l["partner_id"] != float64(annID); l["enabled"] != want {
			t.Errorf("link %v enabled = %v, want %v", l["short_link"], l["enabled"], want)
		}
	}
	for _, l := range []map[string]any{link1, link2} {
		res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": l["referral_url"]}, "User-Agent", chromeUA)
		if e, _ := res.JSON(t)["error"].(map[string]any); res.Status != http.StatusGone || e["code"] != "link_disabled" {
			t.Errorf("click on a banned partner's link: %d %s", res.Status, res.Body)
		}
		platformError(t, f.do(http.MethodPatch, fmt.Sprintf("/api/v1/links/%v", l["id"]), map[string]any{"enabled": true}),
			http.StatusConflict, "ConflictError", "The partner is banned from this program: their links stay off")
	}
	if got := f.data(f.do(http.MethodPatch, fmt.Sprintf("/api/v1/links/%v", link1["id"]), map[string]any{"enabled": false}), http.StatusOK); got["enabled"] != false {
		t.Errorf("turning a banned partner's link off = %v", got)
	}
	platformError(t, f.do(http.MethodPost, f.base+"/links", map[string]any{"partner_id": annID}), http.StatusConflict, "ConflictError",
		"The partner is banned from this program: their links stay off")
	platformError(t, f.do(http.MethodPost, f.base+"/links", map[string]any{"partner_id": annID, "short_link": "ann-again"}), http.StatusConflict,
		"ConflictError", "The partner is banned from this program: their links stay off")
	if res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": f.r.AffiliateURL}, "User-Agent", chromeUA); res.Status != http.StatusOK {
		t.Errorf("click on the seeded partner's link: %d %s", res.Status, res.Body)
	}
	if n := f.env.Count(`SELECT count(*) FROM referral_links WHERE partner_id = $1`, annID); n != 2 {
		t.Errorf("Ann has %d links, want the 2 made before the ban", n)
	}

	// A sale after the ban, by a customer Ann brought: recorded, its commission rejected.
	res := f.env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "ban-late", "amount_cents": 10000,
		"currency": "USD", "customer_key": "cust-late"}, apitest.Bearer(f.r.APIKey)...)
	if res.Status != http.StatusOK {
		t.Fatalf("sale after the ban: %d %s", res.Status, res.Body)
	}
	lateCommission, _ := res.JSON(t)["commission"].(map[string]any)
	if lateCommission["status"] != "rejected" {
		t.Errorf("the commission of a sale after the ban = %v", lateCommission)
	}
	if got := f.data(f.do(http.MethodGet, commission(lateCommission["id"]), nil), http.StatusOK); got["status"] != "rejected" ||
		got["rejected_reason"] != "partner banned" || got["partner_id"] != float64(annID) {
		t.Errorf("the commission of a sale after the ban = %v", got)
	}
	if got := f.listedPartners()[annID]["stats"]; !cmp.Equal(got, stats(6, 6, 6)) {
		t.Errorf("Ann's stats = %v", got)
	}

	// No payout for a banned partner; the one in progress is paid as usual.
	if got := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated); len(got) != 0 {
		t.Errorf("a payout run after the ban paid %v", got)
	}
	if got := f.data(f.do(http.MethodPost, payout(run[0]["id"])+"/paid", map[string]any{"external_reference": "BATCH-1"}), http.StatusOK); got["status"] != "paid" {
		t.Errorf("paid = %v", got)
	}
	if got := f.data(f.do(http.MethodGet, commission(inPayout), nil), http.StatusOK); got["status"] != "paid" {
		t.Errorf("the commission in the payout = %v", got)
	}
	annUSD := fmt.Sprintf("%d USD", annID)
	if b := bucket(f.balances()[annUSD]); b != [5]float64{0, 0, 0, 2000, 0} {
		t.Errorf("Ann's balance = %v, want only the paid commission", b)
	}
	f.conserved()

	// The audit log: the ban (with what it did) and each commission it rejected, by the owner.
	if got := f.audited(fmt.Sprintf("partner:%d", annID)); !slices.Equal(got, []string{"partner.ban"}) {
		t.Errorf("audit of Ann = %v", got)
	}
	var detail struct {
		Links    int    `db:"links"`
		Rejected int    `db:"rejected"`
		Reason   string `db:"reason"`
		Actor    string `db:"actor"`
	}
	if err := f.env.DB.Get(&detail, `SELECT (detail->>'links_disabled')::int AS links, (detail->>'commissions_rejected')::int AS rejected,
		detail->>'reason' AS reason, actor FROM audit_log WHERE action = 'partner.ban'`); err != nil {
		t.Fatal(err)
	}
	if detail.Links != 2 || detail.Rejected != 3 || detail.Reason != "Cookie stuffing" || !strings.Contains(detail.Actor, f.r.AccountEmail) {
		t.Errorf("the ban's audit entry = %+v", detail)
	}
	for _, c := range []any{approved, pending, partly} {
		if got := f.audited(fmt.Sprintf("commission:%v", c)); !slices.Contains(got, "commission.reject") {
			t.Errorf("audit of commission %v = %v, want its rejection", c, got)
		}
	}
	for _, c := range []any{inPayout, reversed, seeded} {
		if got := f.audited(fmt.Sprintf("commission:%v", c)); slices.Contains(got, "commission.reject") {
			t.Errorf("commission %v, not rejected, has a rejection in the audit log: %v", c, got)
		}
	}
}

// near reports whether a time read back from the database is t: the clock of the test stands still, and
// the database keeps microseconds.
func near(got, t time.Time) bool { return got.Sub(t).Abs() <= time.Microsecond }

// invitationLink finds the link of the newest mail to email in the mailbox.
func invitationLink(t *testing.T, env *apitest.Env, email string) string {
	t.Helper()
	for _, m := range env.Mailbox.Messages() {
		if m.To == email {
			link := linkShape(env).FindString(m.Text)
			if link == "" {
				t.Fatalf("the mail to %s has no invitation link:\n%s", email, m.Text)
			}
			return link
		}
	}
	t.Fatalf("no mail to %s", email)
	return ""
}

// linkShape is an invitation link of env's server: the base URL, the path and a 32-character token.
func linkShape(env *apitest.Env) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(env.URL+"/partners/invitations/") + `[0-9A-Za-z]{32}\b`)
}

// tokenHash is the stored hash of an invitation.
func tokenHash(t *testing.T, env *apitest.Env, invitationID any) []byte {
	t.Helper()
	var h []byte
	if err := env.DB.Get(&h, `SELECT token_hash FROM partner_invitations WHERE id = $1`, invitationID); err != nil {
		t.Fatal(err)
	}
	return h
}

// Invitations: one or a batch, all or none; each refusal word for word; the list newest first; expiry
// on the server's clock; resend with a new link; cancel, and inviting again.
func TestInvitations(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	start := f.clock.Now()

	// 201: one, with a name and a note.
	made := f.invite(map[string]any{"email": "ada@example.com", "name": "Ada Lovelace", "message": "We would love to have you."})
	if len(made) != 1 {
		t.Fatalf("made %v", made)
	}
	ada := made[0]
	sent, err := time.Parse(time.RFC3339Nano, ada["last_sent_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": ada["id"], "program_id": float64(f.r.ProgramID), "partner_id": ada["partner_id"], "email": "ada@example.com",
		"name": "Ada Lovelace", "message": "We would love to have you.", "status": "sent", "sent_count": 1.0, "last_sent_at": ada["last_sent_at"],
		"expires_at": sent.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339Nano), "accepted_at": nil, "created_at": ada["created_at"]}
	if diff := cmp.Diff(want, ada); diff != "" {
		t.Errorf("invitation (-want +got):\n%s", diff)
	}
	if created, _ := time.Parse(time.RFC3339Nano, ada["created_at"].(string)); !near(sent, start) || !created.Equal(sent) {
		t.Errorf("last_sent_at %v and created_at %v are not the server's clock (%v)", sent, ada["created_at"], start)
	}
	adaPartner := f.listedPartners()[int64(ada["partner_id"].(float64))]
	if adaPartner["status"] != "invited" || adaPartner["name"] != "Ada Lovelace" || adaPartner["email"] != "ada@example.com" {
		t.Errorf("the invited partner = %v", adaPartner)
	}
	// Without a name, the email's local part names a new partner; an existing one keeps their name.
	if got := f.invite(map[string]any{"email": "grace.hopper@example.com"})[0]; got["name"] != "grace.hopper" || got["message"] != nil {
		t.Errorf("invitation without a name = %v", got)
	}
	known := f.addPartner("Known Person", "known@example.com")
	f.applied(idOf(known))
	f.data(f.do(http.MethodPost, f.enrollmentOf(idOf(known), "reject"), nil), http.StatusOK)
	if got := f.invite(map[string]any{"email": "KNOWN@example.com", "name": "Other Name"})[0]; got["name"] != "Known Person" ||
		got["partner_id"] != known["id"] || got["email"] != "KNOWN@example.com" {
		t.Errorf("invitation of a rejected partner = %v, want the partner %v", got, known)
	}

	// 201: a batch of 50, in the order given.
	batch := make([]any, 50)
	for i := range batch {
		batch[i] = map[string]any{"email": fmt.Sprintf("p%02d@batch.example.com", i)}
	}
	fifty := f.invite(map[string]any{"invitations": batch})
	if len(fifty) != 50 {
		t.Fatalf("a batch of 50 made %d", len(fifty))
	}
	for i, v := range fifty {
		if v["email"] != fmt.Sprintf("p%02d@batch.example.com", i) || v["status"] != "sent" {
			t.Errorf("invitation %d = %v", i, v)
		}
	}

	// The seeded partner (approved), one who applied and one banned.
	pending := f.addPartner("Pending", "pending@example.com")
	f.applied(idOf(pending))
	bannedPartner := f.addPartner("Banned", "banned@example.com")
	f.data(f.do(http.MethodPost, f.enrollmentOf(idOf(bannedPartner), "ban"), nil), http.StatusOK)
	var seededEmail string
	if err := f.env.DB.Get(&seededEmail, `SELECT email FROM partners WHERE id = $1`, f.r.PartnerID); err != nil {
		t.Fatal(err)
	}

	// Refused, nothing stored: no partner, no invitation, no mail.
	tables := func() [4]int {
		return [4]int{f.env.Count(`SELECT count(*) FROM partners`), f.env.Count(`SELECT count(*) FROM partner_programs`),
			f.env.Count(`SELECT count(*) FROM partner_invitations`), f.env.Count(`SELECT count(*) FROM mail_outbox`)}
	}
	fiftyOne := append(slices.Clone(batch), map[string]any{"email": "p50@batch.example.com"})
	for i := range fiftyOne {
		fiftyOne[i] = map[string]any{"email": fmt.Sprintf("n%02d@batch.example.com", i)}
	}
	valid := func(email string) map[string]any { return map[string]any{"email": email} }
	for _, tc := range []struct {
		name    string
		status  int
		body    any
		message string
	}{
		{"neither", 400, `{}`, "Request body must have either email or invitations"},
		{"both", 400, map[string]any{"email": "x@example.com", "invitations": []any{valid("y@example.com")}}, "Request body must have either email or invitations"},
		{"no body", 400, nil, "Request body must have either email or invitations"},
		{"none", 400, map[string]any{"invitations": []any{}}, "invitations must hold 1 to 50 invitations"},
		{"51", 400, map[string]any{"invitations": fiftyOne}, "invitations must hold 1 to 50 invitations"},
		{"not a list", 400, map[string]any{"invitations": "x@example.com"}, "invitations must hold 1 to 50 invitations"},
		{"email", 400, map[string]any{"email": "not-an-email"}, "email must be an email address"},
		{"email with a name", 400, map[string]any{"email": "Ada <new@example.com>"}, "email must be an email address"},
		{"email a number", 400, `{"email":5}`, "email must be an email address"},
		{"email no dot", 400, map[string]any{"email": "x@localhost"}, "email must be an email address"},
		{"email 321", 400, map[string]any{"email": strings.Repeat("a", 309) + "@example.com"}, "email must be an email address"},
		{"third email", 400, map[string]any{"invitations": []any{valid("n1@example.com"), valid("n2@example.com"), valid("nope")}},
			"invitations[2].email must be an email address"},
		{"item not an object", 400, map[string]any{"invitations": []any{valid("n1@example.com"), "n2@example.com"}},
			"invitations[1].email must be an email address"},
		{"name empty", 400, map[string]any{"email": "n@example.com", "name": ""}, "name must be 1 to 200 characters"},
		{"name 201", 400, map[string]any{"email": "n@example.com", "name": strings.Repeat("é", 201)}, "name must be 1 to 200 characters"},
		{"second name", 400, map[string]any{"invitations": []any{valid("n1@example.com"), map[string]any{"email": "n2@example.com", "name": strings.Repeat("n", 201)}}},
			"invitations[1].name must be 1 to 200 characters"},
		{"message 2001", 400, map[string]any{"email": "n@example.com", "message": strings.Repeat("m", 2001)}, "message must be at most 2000 characters"},
		{"message a number", 400, `{"email":"n@example.com","message":5}`, "message must be at most 2000 characters"},
		{"first message", 400, map[string]any{"invitations": []any{map[string]any{"email": "n1@example.com", "message": strings.Repeat("é", 2001)}}},
			"invitations[0].message must be at most 2000 characters"},
		{"twice", 400, map[string]any{"invitations": []any{valid("same@example.com"), valid("n@example.com"), valid("Same@Example.com")}},
			"The same email is invited twice: Same@Example.com"},
		{"open invitation", 409, map[string]any{"email": "ada@example.com"}, "ada@example.com already has an open invitation: resend it"},
		{"open invitation, other case", 409, map[string]any{"email": "ADA@example.com"}, "ADA@example.com already has an open invitation: resend it"},
		{"approved", 409, map[string]any{"email": seededEmail}, seededEmail + " is already a partner of this program"},
		{"applied", 409, map[string]any{"email": "pending@example.com"}, "pending@example.com applied to this program: approve the application"},
		{"banned", 409, map[string]any{"email": "banned@example.com"}, "banned@example.com is banned from this program"},
		{"third approved", 409, map[string]any{"invitations": []any{valid("new1@example.com"), valid("new2@example.com"), valid(seededEmail)}},
			seededEmail + " is already a partner of this program"},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.name), func(t *testing.T) {
			before := tables()
			name := map[int]string{400: "BadRequestError", 409: "ConflictError"}[tc.status]
			platformError(t, f.do(http.MethodPost, f.base+"/invitations", tc.body), tc.status, name, tc.message)
			if after := tables(); after != before {
				t.Errorf("a refused invitation stored something: partners, enrollments, invitations, mail %v → %v", before, after)
			}
		})
	}
	if n := f.env.Count(`SELECT count(*) FROM partners WHERE email IN ('new1@example.com', 'new2@example.com')`); n != 0 {
		t.Errorf("a refused batch left %d partners", n)
	}

	// 200: the list, newest first, every invitation once.
	list := f.list(f.do(http.MethodGet, f.base+"/invitations", nil), http.StatusOK)
	if len(list) != 53 || list[0]["email"] != "p49@batch.example.com" || list[52]["id"] != ada["id"] {
		t.Fatalf("list of %d, first %v, last %v", len(list), list[0], list[len(list)-1])
	}
	for i := 1; i < len(list); i++ {
		if list[i-1]["id"].(float64) <= list[i]["id"].(float64) {
			t.Fatalf("list not newest first at %d: %v then %v", i, list[i-1]["id"], list[i]["id"])
		}
	}
	if !cmp.Equal(list[52], ada) {
		t.Errorf("listed %v, made %v", list[52], ada)
	}

	// The mail of the first sending, then expiry: a sent invitation past expires_at reads expired.
	if err := f.env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	firstLink := invitationLink(t, f.env, "ada@example.com")
	firstHash := tokenHash(t, f.env, ada["id"])
	if !bytes.Equal(secret.Hash(firstLink[strings.LastIndexByte(firstLink, '/')+1:]), firstHash) {
		t.Errorf("the link %s is not the stored token's (hash %s)", firstLink, hex.EncodeToString(firstHash))
	}
	f.clock.Advance(30*24*time.Hour - time.Minute)
	if got := f.data(f.do(http.MethodPost, f.invitation(ada["id"])+"/resend", nil), http.StatusOK); got["status"] != "sent" {
		t.Fatalf("resent before expiry = %v", got)
	}
	f.clock.Advance(30*24*time.Hour + time.Second)
	listed := map[any]map[string]any{}
	for _, v := range f.list(f.do(http.MethodGet, f.base+"/invitations", nil), http.StatusOK) {
		listed[v["id"]] = v
	}
	if listed[ada["id"]]["status"] != "expired" || listed[fifty[0]["id"]]["status"] != "expired" {
		t.Errorf("after 30 days: %v, %v", listed[ada["id"]], listed[fifty[0]["id"]])
	}
	// Expired, it is still open: inviting again is refused, resending works.
	platformError(t, f.do(http.MethodPost, f.base+"/invitations", map[string]any{"email": "ada@example.com"}), http.StatusConflict, "ConflictError",
		"ada@example.com already has an open invitation: resend it")

	// Resend: a new link (the old one differs), a new expiry, counted.
	if err := f.env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	secondLink := invitationLink(t, f.env, "ada@example.com")
	now := f.clock.Now()
	resent := f.data(f.do(http.MethodPost, f.invitation(ada["id"])+"/resend", nil), http.StatusOK)
	lastSent, _ := time.Parse(time.RFC3339Nano, resent["last_sent_at"].(string))
	expires, _ := time.Parse(time.RFC3339Nano, resent["expires_at"].(string))
	if resent["status"] != "sent" || resent["sent_count"] != 3.0 || !near(lastSent, now) || !expires.Equal(lastSent.Add(30*24*time.Hour)) ||
		resent["created_at"] != ada["created_at"] || resent["id"] != ada["id"] {
		t.Errorf("resent = %v", resent)
	}
	if err := f.env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	thirdLink := invitationLink(t, f.env, "ada@example.com")
	if firstLink == secondLink || secondLink == thirdLink || firstLink == thirdLink {
		t.Errorf("the links of three sendings are not all new: %s, %s, %s", firstLink, secondLink, thirdLink)
	}
	if !bytes.Equal(secret.Hash(thirdLink[strings.LastIndexByte(thirdLink, '/')+1:]), tokenHash(t, f.env, ada["id"])) {
		t.Errorf("the newest link %s is not the stored token's", thirdLink)
	}
	if n := len(slices.DeleteFunc(f.env.Mailbox.Messages(), func(m mail.Kept) bool { return m.To != "ada@example.com" })); n != 3 {
		t.Errorf("ada received %d mails, want 3", n)
	}

	// Cancel: canceled, the partner leaves the program; again, the same answer; then invited anew.
	grace := listed[fifty[0]["id"]]
	graceID := int64(grace["partner_id"].(float64))
	canceled := f.data(f.do(http.MethodDelete, f.invitation(grace["id"]), nil), http.StatusOK)
	if canceled["status"] != "canceled" || canceled["id"] != grace["id"] {
		t.Errorf("canceled = %v", canceled)
	}
	if _, listed := f.listedPartners()[graceID]; listed {
		t.Error("the partner of a canceled invitation is still listed")
	}
	if again := f.data(f.do(http.MethodDelete, f.invitation(grace["id"]), nil), http.StatusOK); !cmp.Equal(again, canceled) {
		t.Errorf("canceling again = %v, want %v", again, canceled)
	}
	platformError(t, f.do(http.MethodPost, f.invitation(grace["id"])+"/resend", nil), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Invitation %v was canceled", grace["id"]))
	platformError(t, f.do(http.MethodPost, f.enrollmentOf(graceID, "approve"), nil), http.StatusNotFound, "NotFoundError", "Partner not found")
	anew := f.invite(map[string]any{"email": grace["email"]})[0]
	if anew["id"] == grace["id"] || anew["partner_id"] != grace["partner_id"] || anew["status"] != "sent" || anew["sent_count"] != 1.0 {
		t.Errorf("invited again = %v (first %v)", anew, grace)
	}
	if got := f.listedPartners()[graceID]; got["status"] != "invited" {
		t.Errorf("invited again, the partner = %v", got)
	}

	// Accepted (by the partner, in the portal): neither resent nor canceled.
	if _, err := f.env.DB.Exec(`UPDATE partner_invitations SET status = 'accepted', accepted_at = now() WHERE id = $1`, anew["id"]); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		path := f.invitation(anew["id"])
		if method == http.MethodPost {
			path += "/resend"
		}
		platformError(t, f.do(method, path, nil), http.StatusConflict, "ConflictError", fmt.Sprintf("Invitation %v was accepted", anew["id"]))
	}

	// 404: another program's invitation, or none.
	other := f.another()
	theirs := other.invite(map[string]any{"email": "theirs@example.com"})[0]
	for _, path := range []string{f.invitation(theirs["id"]), f.invitation(999999)} {
		platformError(t, f.do(http.MethodPost, path+"/resend", nil), http.StatusNotFound, "NotFoundError", "Invitation not found")
		platformError(t, f.do(http.MethodDelete, path, nil), http.StatusNotFound, "NotFoundError", "Invitation not found")
	}
	if got := other.list(other.do(http.MethodGet, other.base+"/invitations", nil), http.StatusOK); len(got) != 1 || got[0]["status"] != "sent" {
		t.Errorf("the other program's invitations = %v", got)
	}

	// The audit log.
	for target, want := range map[string][]string{
		fmt.Sprintf("invitation:%v", ada["id"]):   {"invitation.resend", "invitation.resend"},
		fmt.Sprintf("invitation:%v", grace["id"]): {"invitation.cancel"},
		fmt.Sprintf("partner:%v", graceID):        {"partner.invite", "partner.invite"},
	} {
		if got := f.audited(target); !slices.Equal(got, want) {
			t.Errorf("audit of %s = %v, want %v", target, got, want)
		}
	}
}

// The invitation's mail: through the outbox to the mailbox, with the brand's note and a link to accept;
// once sent, the outbox keeps no body. /dev/mail shows it, escaped.
func TestInvitationMail(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{ProgramName: "Acme & Co"})
	owner := apitest.Bearer(r.AccountToken)
	note := "Hello <script>alert(1)</script> & welcome,\nsee https://acme.example.com/partners?a=1&b=2 for the terms."
	res := env.Do(http.MethodPost, "/api/v1/programs/"+itoa(r.ProgramID)+"/invitations", map[string]any{"invitations": []any{
		map[string]any{"email": "ada@example.com", "name": "Ada", "message": note}, map[string]any{"email": "bob@example.com"}}}, owner...)
	if res.Status != http.StatusCreated {
		t.Fatalf("invite: %d %s", res.Status, res.Body)
	}
	invitations := res.JSON(t)["data"].([]any)
	adaID := invitations[0].(map[string]any)["id"]

	// Queued in the outbox, sent by the courier, not by the request.
	if n := len(env.Mailbox.Messages()); n != 0 {
		t.Fatalf("%d mails sent before the courier ran", n)
	}
	var queued []struct {
		To   string  `db:"to_address"`
		Text *string `db:"text_body"`
		HTML *string `db:"html_body"`
	}
	if err := env.DB.Select(&queued, `SELECT to_address, text_body, html_body FROM mail_outbox ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 2 || queued[0].To != "ada@example.com" || queued[0].Text == nil || queued[0].HTML == nil {
		t.Fatalf("outbox = %+v", queued)
	}
	if err := env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	mails := env.Mailbox.Messages()
	if len(mails) != 2 {
		t.Fatalf("sent %d mails, want 2", len(mails))
	}
	m := mails[1] // newest first
	if m.To != "ada@example.com" || m.Subject != "Acme & Co invites you to its partner program" || m.From != env.Config.MailFrom {
		t.Errorf("mail = %+v", m)
	}
	link := linkShape(env).FindString(m.Text)
	if link == "" || !strings.Contains(m.Text, note) || !strings.HasPrefix(m.Text, "Hello Ada,") {
		t.Errorf("text body lacks the greeting, the note or the link:\n%s", m.Text)
	}
	if !bytes.Equal(secret.Hash(link[strings.LastIndexByte(link, '/')+1:]), tokenHash(t, env, adaID)) {
		t.Errorf("the link %s is not the invitation's", link)
	}
	if !strings.Contains(m.HTML, `href="`+link+`"`) || strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "&lt;script&gt;") {
		t.Errorf("HTML body:\n%s", m.HTML)
	}
	if bob := mails[0]; bob.To != "bob@example.com" || !strings.HasPrefix(bob.Text, "Hello bob,") || strings.Contains(bob.Text, "Their note") {
		t.Errorf("mail without a note = %+v", bob)
	}
	// Sent once: a second pass sends nothing; the outbox keeps no body (the link lives in the mailbox).
	if err := env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(env.Mailbox.Messages()); n != 2 {
		t.Errorf("after a second pass, %d mails", n)
	}
	if n := env.Count(`SELECT count(*) FROM mail_outbox WHERE sent_at IS NOT NULL AND text_body IS NULL AND html_body IS NULL
		AND attempts = 1 AND last_error IS NULL`); n != 2 {
		t.Errorf("%d of 2 outbox rows sent and cleared", n)
	}

	// /dev/mail, without a credential: the mails, escaped, the link a link.
	page := env.Do(http.MethodGet, "/dev/mail", nil)
	body := string(page.Body)
	if page.Status != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/dev/mail: %d %s", page.Status, page.Header)
	}
	for _, want := range []string{"Acme &amp; Co invites you to its partner program", "ada@example.com", "bob@example.com",
		`<a href="` + link + `">` + link + `</a>`, "Hello &lt;script&gt;alert(1)&lt;/script&gt; &amp; welcome",
		`<a href="https://acme.example.com/partners?a=1&amp;b=2">`} {
		if !strings.Contains(body, want) {
			t.Errorf("/dev/mail lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("/dev/mail shows the note's <script> unescaped")
	}
	if strings.Index(body, "bob@example.com") > strings.Index(body, "ada@example.com") {
		t.Error("/dev/mail does not show the newest first")
	}
}

// Who may act on enrollments and invitations: owner and admin; analyst and billing read the invitations
// and are refused every change; another workspace's member, no credential and a program key are refused
// as on every program route.
func TestPartnerRoutesRoles(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	stranger := apitest.Bearer(f.env.Seed(seed.Options{}).AccountToken)
	// routes are the new routes against fresh targets (made by the owner) for each caller.
	routes := func(caller string) []struct{ name, method, path string } {
		pending, rejecting := idOf(f.addPartner(caller+" p", caller+".p@example.com")), idOf(f.addPartner(caller+" r", caller+".r@example.com"))
		f.applied(pending)
		f.applied(rejecting)
		banning := idOf(f.addPartner(caller+" b", caller+".b@example.com"))
		invs := f.invite(map[string]any{"invitations": []any{map[string]any{"email": caller + ".i1@example.com"}, map[string]any{"email": caller + ".i2@example.com"}}})
		return []struct{ name, method, path string }{
			{"approve", http.MethodPost, f.enrollmentOf(pending, "approve")},
			{"reject", http.MethodPost, f.enrollmentOf(rejecting, "reject")},
			{"ban", http.MethodPost, f.enrollmentOf(banning, "ban")},
			{"invite", http.MethodPost, f.base + "/invitations"},
			{"resend", http.MethodPost, f.invitation(invs[0]["id"]) + "/resend"},
			{"cancel", http.MethodDelete, f.invitation(invs[1]["id"])},
			{"list invitations", http.MethodGet, f.base + "/invitations"},
			{"list partners", http.MethodGet, f.base + "/partners"},
		}
	}
	body := func(caller, route string) any {
		if route == "invite" {
			return map[string]any{"email": caller + ".new@example.com"}
		}
		return nil
	}
	for _, role := range []string{"owner", "admin", "analyst", "billing"} {
		t.Run(role, func(t *testing.T) {
			token := apitest.Bearer(member(t, f.env, f.r.AdvertiserID, role))
			for _, rt := range routes(role) {
				res := f.env.Do(rt.method, rt.path, body(role, rt.name), token...)
				switch {
				case role == "owner" || role == "admin" || rt.method == http.MethodGet:
					if res.Status >= 300 {
						t.Errorf("%s %s: %d %s", role, rt.name, res.Status, res.Body)
					}
				default:
					platformError(t, res, http.StatusForbidden, "ForbiddenError", "Your role ("+role+") does not allow this (partners:write)")
				}
			}
		})
	}
	// The audit log names the member who acted: the owner's and the admin's changes, nobody else's.
	var actors []string
	if err := f.env.DB.Select(&actors, `SELECT DISTINCT actor FROM audit_log WHERE action IN ('partner.approve', 'partner.reject',
		'partner.ban', 'invitation.resend', 'invitation.cancel') ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(actors) != 2 || !strings.HasPrefix(actors[0], "admin-") || !strings.HasPrefix(actors[1], "owner-") {
		t.Errorf("changes audited as made by %v, want the admin and the owner", actors)
	}

	for _, rt := range routes("outsider") {
		t.Run("refused/"+rt.name, func(t *testing.T) {
			b := body("outsider", rt.name)
			platformError(t, f.env.Do(rt.method, rt.path, b, stranger...), http.StatusForbidden, "ForbiddenError",
				"You are not a member of this program's workspace")
			platformError(t, f.env.Do(rt.method, rt.path, b), http.StatusUnauthorized, "UnauthorizedError",
				"Authentication required — run reftrack login first")
			platformError(t, f.env.Do(rt.method, rt.path, b, apitest.Bearer(f.r.APIKey)...), http.StatusUnauthorized, "UnauthorizedError",
				"This route needs an account login token, not a program API key — run reftrack login and send its token")
			platformError(t, f.env.Do(rt.method, rt.path, b, apitest.Bearer("rtu_nope")...), http.StatusUnauthorized, "UnauthorizedError",
				"Invalid or expired token — run the login command again")
			missing := strings.Replace(rt.path, f.base, "/api/v1/programs/999999", 1)
			platformError(t, f.do(rt.method, missing, b), http.StatusNotFound, "NotFoundError", "Program not found")
		})
	}
	// Nothing the refused callers sent changed anything.
	if n := f.env.Count(`SELECT count(*) FROM partners WHERE email LIKE 'outsider.new%' OR email LIKE 'analyst.new%' OR email LIKE 'billing.new%'`); n != 0 {
		t.Errorf("refused invitations made %d partners", n)
	}
	if n := f.env.Count(`SELECT count(*) FROM partner_programs pp JOIN partners pa ON pa.id = pp.partner_id
		WHERE pp.status NOT IN ('pending', 'active', 'invited') AND split_part(pa.email, '.', 1) IN ('outsider', 'analyst', 'billing')`); n != 0 {
		t.Errorf("refused callers changed %d enrollments", n)
	}
	if n := f.env.Count(`SELECT count(*) FROM partner_invitations i JOIN partners pa ON pa.id = i.partner_id
		WHERE (i.status <> 'sent' OR i.sent_count <> 1) AND split_part(pa.email, '.', 1) IN ('outsider', 'analyst', 'billing')`); n != 0 {
		t.Errorf("refused callers changed %d invitations", n)
	}
	// The session cookie works like the Bearer token.
	if res := f.env.Do(http.MethodGet, f.base+"/invitations", nil, "Cookie", "reftrack_session="+f.r.AccountToken); res.Status != http.StatusOK {
		t.Errorf("session cookie: %d %s", res.Status, res.Body)
	}
}

// A ban is the program's: the same partner in another program of the workspace keeps their links,
// commissions and enrollment there, and may be invited there; a partner of that other program only is
// not found in this one.
func TestPartnerBanIsPerProgram(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	res := f.do(http.MethodPost, "/api/v1/cli/init", map[string]any{"name": "Second shop", "domain": "second.example.com",
		"commission_type": "percent", "commission_rate": 10})
	if res.Status != http.StatusCreated {
		t.Fatalf("second program: %d %s", res.Status, res.Body)
	}
	d := res.JSON(t)["data"].(map[string]any)
	g := &ledgerFixture{t: t, env: f.env, clock: f.clock, r: f.r, owner: f.owner, base: fmt.Sprintf("/api/v1/programs/%v", d["program_id"])}
	var err error
	if g.r.ProgramID, err = strconv.ParseInt(fmt.Sprint(d["program_id"]), 10, 64); err != nil {
		t.Fatal(err)
	}
	g.r.APIKey = d["api_key"].(string)

	ann := idOf(f.addPartner("Ann", "ann@example.com"))
	if again := idOf(g.addPartner("Ann", "ann@example.com")); again != ann {
		t.Fatalf("the workspace's partner Ann is %d in one program, %d in the other", ann, again)
	}
	bob := idOf(g.addPartner("Bob", "bob@example.com"))
	aURL, bURL := f.addLink(ann)["referral_url"].(string), g.addLink(ann)["referral_url"].(string)
	inA := f.sale("a-1", 10000, "USD", aURL)["id"]
	g.r.AffiliateURL = bURL
	inB := g.sale("b-1", 10000, "USD", bURL)["id"]

	f.data(f.do(http.MethodPost, f.enrollmentOf(ann, "ban"), nil), http.StatusOK)
	if got := f.data(f.do(http.MethodGet, commission(inA), nil), http.StatusOK)["status"]; got != "rejected" {
		t.Errorf("Ann's commission in the program that banned her: %v", got)
	}
	if got := f.data(f.do(http.MethodGet, commission(inB), nil), http.StatusOK)["status"]; got != "pending" {
		t.Errorf("Ann's commission in the other program: %v", got)
	}
	if got := g.listedPartners()[ann]["status"]; got != "approved" {
		t.Errorf("Ann in the other program: %v", got)
	}
	for url, want := range map[string]int{aURL: http.StatusGone, bURL: http.StatusOK} {
		if res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": url}, "User-Agent", chromeUA); res.Status != want {
			t.Errorf("click on %s: %d, want %d", url, res.Status, want)
		}
	}
	g.addLink(ann) // a new link in the other program
	later := g.sale("b-2", 10000, "USD", bURL)
	if later["status"] != "pending" {
		t.Errorf("a sale in the other program after the ban: %v", later)
	}
	g.conserved()
	f.conserved()

	// Bob is the workspace's partner, not this program's.
	for _, action := range []string{"approve", "reject", "ban"} {
		platformError(t, f.do(http.MethodPost, f.enrollmentOf(bob, action), nil), http.StatusNotFound, "NotFoundError", "Partner not found")
	}
	// Banned in one program, Carl may be invited to the other.
	carl := idOf(f.addPartner("Carl", "carl@example.com"))
	f.data(f.do(http.MethodPost, f.enrollmentOf(carl, "ban"), nil), http.StatusOK)
	if got := g.invite(map[string]any{"email": "carl@example.com"})[0]; got["partner_id"] != float64(carl) || got["status"] != "sent" {
		t.Errorf("Carl invited to the other program: %v", got)
	}
	platformError(t, f.do(http.MethodPost, f.base+"/invitations", map[string]any{"email": "carl@example.com"}), http.StatusConflict,
		"ConflictError", "carl@example.com is banned from this program")
}

// A link the brand made for an invited partner stops with the invitation: canceled, the partner is no
// longer in the program, and their link answers 410 rather than earning them commissions there.
func TestCanceledInvitationTurnsLinksOff(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	inv := f.invite(map[string]any{"email": "ivy@example.com"})[0]
	link := f.addLink(inv["partner_id"])
	click := func() int {
		return f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": link["referral_url"]}, "User-Agent", chromeUA).Status
	}
	if s := click(); s != http.StatusOK {
		t.Fatalf("click on the invited partner's link: %d", s)
	}
	f.data(f.do(http.MethodDelete, f.invitation(inv["id"]), nil), http.StatusOK)
	if s := click(); s != http.StatusGone {
		t.Errorf("click on the link of a partner whose invitation was canceled: %d, want 410", s)
	}
	for _, l := range f.list(f.do(http.MethodGet, f.base+"/links", nil), http.StatusOK) {
		if l["id"] == link["id"] && l["enabled"] != false {
			t.Errorf("link after the cancel = %v", l)
		}
	}
	// Invited again and accepted, the partner's link can be turned on by the brand.
	again := f.invite(map[string]any{"email": "ivy@example.com"})[0]
	if _, err := f.env.DB.Exec(`UPDATE partner_programs SET status = 'approved' WHERE partner_id = $1 AND program_id = $2`,
		again["partner_id"], f.r.ProgramID); err != nil {
		t.Fatal(err)
	}
	if got := f.data(f.do(http.MethodPatch, fmt.Sprintf("/api/v1/links/%v", link["id"]), map[string]any{"enabled": true}), http.StatusOK); got["enabled"] != true {
		t.Errorf("turned on again = %v", got)
	}
	if s := click(); s != http.StatusOK {
		t.Errorf("click after the link was turned on again: %d", s)
	}
	if got := f.audited(fmt.Sprintf("invitation:%v", inv["id"])); !slices.Equal(got, []string{"invitation.cancel"}) {
		t.Errorf("audit = %v", got)
	}
	var links int
	if err := f.env.DB.Get(&links, `SELECT (detail->>'links_disabled')::int FROM audit_log WHERE action = 'invitation.cancel'`); err != nil || links != 1 {
		t.Errorf("the cancel's audit entry says %d links turned off (%v)", links, err)
	}
}

// Only a change that queued mail wakes the mail courier: an invitation and its resend do; a sale, a
// click, a lead and a refused invitation do not (woken by every change, the courier leased the outbox
// once per sale under load).
func TestOnlyQueuedMailWakesTheCourier(t *testing.T) {
	t.Parallel()
	var woken atomic.Int64
	env := apitest.Start(t, apitest.Options{MailQueued: func() { woken.Add(1) }})
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "cust-1")
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "in_1", "amount_cents": 4900, "customer_key": "cust-1"}); res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	if n := woken.Load(); n != 0 {
		t.Fatalf("a click, a lead and a sale woke the courier %d times", n)
	}
	owner := apitest.Bearer(r.AccountToken)
	path := "/api/v1/programs/" + itoa(r.ProgramID) + "/invitations"
	if res := env.Do(http.MethodPost, path, map[string]any{"email": "not an address"}, owner...); res.Status != http.StatusBadRequest {
		t.Fatalf("invalid invitation: %d %s", res.Status, res.Body)
	}
	if n := woken.Load(); n != 0 {
		t.Fatalf("a refused invitation woke the courier %d times", n)
	}
	res := env.Do(http.MethodPost, path, map[string]any{"email": "ada@example.com"}, owner...)
	if res.Status != http.StatusCreated {
		t.Fatalf("invite: %d %s", res.Status, res.Body)
	}
	if n := woken.Load(); n != 1 {
		t.Fatalf("an invitation woke the courier %d times, want 1", n)
	}
	id := res.JSON(t)["data"].([]any)[0].(map[string]any)["id"]
	if res := env.Do(http.MethodPost, fmt.Sprintf("%s/%v/resend", path, id), nil, owner...); res.Status != http.StatusOK {
		t.Fatalf("resend: %d %s", res.Status, res.Body)
	}
	if n := woken.Load(); n != 2 {
		t.Errorf("a resend left the courier woken %d times, want 2", n)
	}
}

// Adding a partner can mail them the portal's address and the program's terms (send_portal_invitation),
// written with the partner: an approved partner only, said in the answer; without it nothing is mailed.
func TestAddPartnerCanMailThePortal(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	mailsTo := func(email string) []mail.Kept {
		t.Helper()
		if err := f.env.Mail.SendAll(t.Context()); err != nil {
			t.Fatal(err)
		}
		var out []mail.Kept
		for _, m := range f.env.Mailbox.Messages() {
			if m.To == email {
				out = append(out, m)
			}
		}
		return out
	}
	add := func(body map[string]any) map[string]any {
		t.Helper()
		res := f.do(http.MethodPost, f.base+"/partners", body)
		if res.Status != http.StatusCreated {
			t.Fatalf("add %v: %d %s", body, res.Status, res.Body)
		}
		return res.JSON(t)
	}

	quiet := add(map[string]any{"name": "Quiet", "email": "quiet@example.com"})
	if quiet["portal_invitation_sent"] != false || len(mailsTo("quiet@example.com")) != 0 {
		t.Errorf("added without the mail: %v, %d mails", quiet["portal_invitation_sent"], len(mailsTo("quiet@example.com")))
	}

	sam := add(map[string]any{"name": "Sam Lee", "email": "sam@example.com", "send_portal_invitation": true})
	if sam["portal_invitation_sent"] != true || sam["data"].(map[string]any)["status"] != "approved" {
		t.Fatalf("added with the mail: %v", sam)
	}
	got := mailsTo("sam@example.com")
	if len(got) != 1 {
		t.Fatalf("%d mails to sam@example.com", len(got))
	}
	prog := f.data(f.do(http.MethodGet, f.base, nil), http.StatusOK)
	m := got[0]
	if m.Subject != prog["name"].(string)+" added you to its partner program" || !strings.Contains(m.Text, "The terms: "+prog["terms"].(string)+"\n") ||
		!strings.Contains(m.Text, "\n"+f.env.URL+"/partners\n") || !strings.Contains(m.Text, "(sam@example.com)") || !strings.Contains(m.HTML, `href="`+f.env.URL+`/partners"`) {
		t.Errorf("the mail:\n%s\n%s", m.Subject, m.Text)
	}

	// Someone invited is not approved yet: they keep their invitation, and get no second mail.
	f.invite(map[string]any{"email": "ivy@example.com"})
	before := len(mailsTo("ivy@example.com"))
	ivy := add(map[string]any{"name": "Ivy", "email": "ivy@example.com", "send_portal_invitation": true})
	if ivy["portal_invitation_sent"] != false || ivy["data"].(map[string]any)["status"] != "invited" || len(mailsTo("ivy@example.com")) != before {
		t.Errorf("an invited partner added with the mail: %v, %d mails (was %d)", ivy, len(mailsTo("ivy@example.com")), before)
	}
	// A body that is not the schema's changes nothing.
	platformError(t, f.do(http.MethodPost, f.base+"/partners", map[string]any{"name": "X", "email": "x@example.com", "send_portal_invitation": "yes"}),
		http.StatusBadRequest, "BadRequestError", `Invalid request body: send_portal_invitation: value must be a boolean`)
	if n := f.env.Count(`SELECT count(*) FROM partners WHERE email = 'x@example.com'`); n != 0 {
		t.Errorf("a refused add made %d partners", n)
	}
}
