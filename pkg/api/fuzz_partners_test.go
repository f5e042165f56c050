package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Fuzz targets of the partners' routes (docs/rules.md#partners): the invitations' body, read field by field
// by the handler, and the reason of a rejection or a ban. The checks are the other targets' (fuzz_test.go):
// no 5xx, an answer that fits the spec, the platform envelope.

// startPartnerFuzz is startFuzz with a partner who applied ({{pending}}), the seeded partner
// ({{partner}}, approved) and their emails ({{pending_email}}, {{partner_email}}), and an open
// invitation ({{invited_email}}).
func startPartnerFuzz(f *testing.F) *fuzzEnv {
	f.Helper()
	e := startFuzz(f, seed.Options{})
	account := apitest.Bearer(e.seed.AccountToken)
	program := "/api/v1/programs/" + itoa(e.seed.ProgramID)
	res := e.Do(http.MethodPost, program+"/partners", map[string]any{"name": "Pending", "email": "pending@example.com"}, account...)
	pending, _ := res.JSON(f)["data"].(map[string]any)["id"].(float64)
	if res.Status != http.StatusCreated || pending == 0 {
		f.Fatalf("partner: %d %s", res.Status, res.Body)
	}
	if _, err := e.DB.Exec(`UPDATE partner_programs SET status = 'pending' WHERE partner_id = $1`, pending); err != nil {
		f.Fatal(err)
	}
	if res := e.Do(http.MethodPost, program+"/invitations", map[string]any{"email": "invited@example.com"}, account...); res.Status != http.StatusCreated {
		f.Fatalf("invitation: %d %s", res.Status, res.Body)
	}
	var partnerEmail string
	if err := e.DB.Get(&partnerEmail, `SELECT email FROM partners WHERE id = $1`, e.seed.PartnerID); err != nil {
		f.Fatal(err)
	}
	e.fixture("{{pending}}", fmt.Sprint(pending), "{{partner}}", itoa(e.seed.PartnerID), "{{pending_email}}", "pending@example.com",
		"{{partner_email}}", partnerEmail, "{{invited_email}}", "invited@example.com")
	return e
}

// emails are values an invitation's email is tried with: the fixtures' (each a 409), and addresses
// that are not one bare address.
var emails = []string{"{{pending_email}}", "{{partner_email}}", "{{invited_email}}", "INVITED@example.com", "not-an-email", "a@b",
	"Ada <ada@example.com>", "<ada@example.com>", `"ada lovelace"@example.com`, "ada@example.com, bob@example.com", "ada@[127.0.0.1]",
	"ü{{n}}@exämple.com", "a{{n}}@example.com\r\nBcc: x@example.com", " a{{n}}@example.com", "a{{n}}@example.com.",
	strings.Repeat("a", 64) + "@example.com", strings.Repeat("a", 65) + "@example.com", strings.Repeat("a", 308) + "@example.com",
	"a@ex_ample.com", "a@-x.example.com", "@example.com", "ada@", "5", "null", "[]", "{}"}

func FuzzInvitations(f *testing.F) {
	e := startPartnerFuzz(f)
	const one = `{"email":"fz-{{n}}@example.com","name":"Fuzz Partner","message":"We would love to have you."}`
	const batch = `{"invitations":[{"email":"fz-{{n}}-a@example.com"},{"email":"fz-{{n}}-b@example.com","name":"B","message":"Hi"}]}`
	seeds := jsonSeeds(one, batch)
	for _, v := range emails {
		seeds = append(seeds, jsonInput{one, "email", v})
		seeds = append(seeds, jsonInput{batch, "invitations", `[{"email":"fz-{{n}}-c@example.com"},{"email":` + quoteJSON(v) + `}]`})
	}
	for _, v := range []string{"", " ", strings.Repeat("é", 200), strings.Repeat("é", 201), "\u202eevil", "5", "<script>alert(1)</script>"} {
		seeds = append(seeds, jsonInput{one, "name", v})
	}
	for _, v := range []string{"", strings.Repeat("m", 2000), strings.Repeat("é", 2001), "5", "<script>alert(1)</script>\r\n.\r\n",
		"https://evil.example.com/\"><a href=x>"} {
		seeds = append(seeds, jsonInput{one, "message", v})
	}
	fifty, fiftyOne := make([]string, 50), make([]string, 51)
	for i := range fiftyOne {
		item := fmt.Sprintf(`{"email":"fz-{{n}}-%d@example.com"}`, i)
		fiftyOne[i] = item
		if i < 50 {
			fifty[i] = item
		}
	}
	for _, v := range []string{"[" + strings.Join(fifty, ",") + "]", "[" + strings.Join(fiftyOne, ",") + "]", "[]", "[null]", "[[]]", `["a@example.com"]`,
		`[{"email":5}]`, `[{"name":"no email"}]`, `[{"email":"fz-{{n}}-d@example.com"},{"email":"FZ-{{n}}-D@example.com"}]`,
		`[{"email":"fz-{{n}}-e@example.com","name":""}]`, `[{"email":"fz-{{n}}-f@example.com","message":` + quoteJSON(strings.Repeat("m", 2001)) + `}]`,
		`"fz@example.com"`, "{}", "null", "5"} {
		seeds = append(seeds, jsonInput{batch, "invitations", v})
	}
	seeds = append(seeds, jsonInput{one, "invitations", `[{"email":"fz-{{n}}-g@example.com"}]`}, jsonInput{`{"name":"x"}`, "", ""})
	for _, s := range seeds {
		f.Add(s.body, s.field, s.value)
	}
	account := apitest.Bearer(e.seed.AccountToken)
	path := "/api/v1/programs/" + itoa(e.seed.ProgramID) + "/invitations"
	f.Fuzz(func(t *testing.T, body, field, value string) {
		// The value is filled too, after setField (so that it stays JSON): {{n}} makes a new address.
		e.exchange(t, e.post(t, path, "application/json", e.fill(setField(body, field, value)), account...), false)
	})
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// partnerStatusRoutes are the routes FuzzPartnerStatus sends to, by the input's first byte.
var partnerStatusRoutes = []string{
	"/api/v1/programs/{{program}}/partners/{{pending}}/reject",
	"/api/v1/programs/{{program}}/partners/{{partner}}/ban",
	"/api/v1/programs/{{program}}/partners/{{pending}}/approve",
	"/api/v1/programs/{{program}}/partners/{{partner}}/reject",
	"/api/v1/programs/{{program}}/partners/{{pending}}/ban",
	"/api/v1/programs/{{program}}/partners/99999999999999999999/ban",
	"/api/v1/programs/{{program}}/partners/0/reject",
	"/api/v1/programs/99999999999999999999/partners/{{partner}}/ban",
}

func FuzzPartnerStatus(f *testing.F) {
	e := startPartnerFuzz(f)
	seeds := jsonSeeds(`{"reason":"Cookie stuffing"}`)
	for _, v := range []string{" ", "\t\n", "\u00a0", strings.Repeat("é", 500), strings.Repeat("é", 501), strings.Repeat("x", 501), "5",
		"[]", `{"a":1}`, "<script>alert(1)</script>"} {
		seeds = append(seeds, jsonInput{`{"reason":"r"}`, "reason", v})
	}
	for route := range partnerStatusRoutes {
		for _, s := range seeds {
			f.Add(byte(route), s.body, s.field, s.value)
		}
	}
	account := apitest.Bearer(e.seed.AccountToken)
	f.Fuzz(func(t *testing.T, route byte, body, field, value string) {
		path := e.fill(partnerStatusRoutes[int(route)%len(partnerStatusRoutes)])
		contentType := "application/json"
		if body == "" && field == "" {
			contentType = "" // the body is optional: none at all
		}
		e.exchange(t, e.post(t, path, contentType, setField(e.fill(body), field, value), account...), false)
	})
}
