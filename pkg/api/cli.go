package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/synthetic"
)

// --- login session -------------------------------------------------------------------------------------

// CliAuthStart creates a login session; the user opens auth_url, the CLI polls poll_url.
func (s *Server) CliAuthStart(ctx context.Context, _ gen.CliAuthStartRequestObject) (gen.CliAuthStartResponseObject, error) {
	sess, err := logins.Start(ctx, s.deps.DB, s.now())
	if err != nil {
		return nil, err
	}
	state := url.QueryEscape(sess.State)
	out := gen.CliAuthStartResponse{}
	out.Data.State = sess.State
	out.Data.AuthUrl = s.deps.Config.BaseURL + "/login?state=" + state
	out.Data.PollUrl = s.deps.Config.BaseURL + "/api/v1/cli/auth/poll?state=" + state
	out.Data.ExpiresAt = sess.ExpiresAt.UTC()
	return gen.CliAuthStart200JSONResponse{Body: out}, nil
}

// CliAuthCallback completes a pending session with a verified id_token.
func (s *Server) CliAuthCallback(ctx context.Context, req gen.CliAuthCallbackRequestObject) (gen.CliAuthCallbackResponseObject, error) {
	body, err := parseBody((*json.RawMessage)(req.Body))
	if err != nil {
		return nil, err
	}
	state, _, _ := body.str("state")
	token, _, _ := body.str("id_token")
	if state == "" || token == "" {
		return nil, apierr.BadRequest("Missing required fields: state, id_token")
	}
	// A dashboard sign-in finishes only in its browser (the login page), never through this API.
	if sess, err := logins.Get(ctx, s.deps.DB, state); err == nil && sess.Purpose != logins.PurposeCLI {
		return nil, loginError(logins.ErrSessionNotFound)
	}
	acct, err := s.completeLogin(ctx, state, token, "")
	if err != nil {
		return nil, err
	}
	out := gen.CliAuthCallbackResponse{}
	out.Data.Status = gen.CliAuthCallbackResponseDataStatusComplete
	out.Data.Email = acct.Email
	return gen.CliAuthCallback200JSONResponse{Body: out}, nil
}

// completeLogin checks the session, verifies the id_token and signs the session in: the one path of the
// API callback, the login page's form and the issuer's redirect.
func (s *Server) completeLogin(ctx context.Context, state, idToken, nonce string) (logins.Account, error) {
	if _, err := logins.Pending(ctx, s.deps.DB, state, s.now()); err != nil {
		return logins.Account{}, loginError(err)
	}
	id, err := s.login.verifier.Verify(ctx, idToken, nonce)
	if err != nil {
		return logins.Account{}, apierr.BadRequest("Invalid id_token").WithCause(err)
	}
	acct, err := logins.Complete(ctx, s.deps.DB, state, id, s.now())
	if err != nil {
		return logins.Account{}, loginError(err)
	}
	return acct, nil
}

func loginError(err error) error {
	switch {
	case errors.Is(err, logins.ErrSessionNotFound), errors.Is(err, logins.ErrSessionUsed):
		return apierr.NotFound("Session not found or already used")
	case errors.Is(err, logins.ErrSessionExpired):
		return apierr.BadRequest("Session expired")
	case errors.Is(err, logins.ErrSuspended):
		return apierr.Forbidden("Your account has been suspended.").WithDetail("code", "ACCOUNT_BLOCKED")
	case errors.Is(err, logins.ErrEmailTaken):
		return apierr.BadRequest("Invalid id_token").WithCause(err)
	}
	return err
}

// CliAuthPoll answers the session's status, and the login token once.
func (s *Server) CliAuthPoll(ctx context.Context, req gen.CliAuthPollRequestObject) (gen.CliAuthPollResponseObject, error) {
	if req.Params.State == nil || *req.Params.State == "" {
		return nil, apierr.BadRequest("Missing state parameter")
	}
	status, tok, err := logins.Poll(ctx, s.deps.DB, *req.Params.State, s.now())
	switch {
	case errors.Is(err, logins.ErrSessionNotFound):
		return nil, apierr.NotFound("Session not found")
	case errors.Is(err, logins.ErrConsumed):
		return nil, apierr.BadRequest("Session already consumed")
	case err != nil:
		return nil, err
	}
	out := gen.CliAuthPollResponse{}
	out.Data.Status = gen.CliAuthPollResponseDataStatus(status)
	if tok != nil {
		exp := tok.ExpiresAt.UTC()
		out.Data.Token, out.Data.Email, out.Data.AdvertiserId, out.Data.ExpiresAt = &tok.Plain, &tok.Email, tok.WorkspaceID, &exp
	}
	return gen.CliAuthPoll200JSONResponse{Body: out}, nil
}

// --- account routes ------------------------------------------------------------------------------------

// cliAccount authenticates the account login token with the route family's messages.
func (s *Server) cliAccount(ctx context.Context, missing, invalid string) (accounts.Account, error) {
	b := parseBearer(metaFrom(ctx).header.Get("Authorization"))
	token := b.token
	if !b.wellFormed {
		token = ""
	}
	return s.authenticateAccount(ctx, token, apierr.Unauthorized(missing), apierr.Unauthorized(invalid))
}

// CliInit creates a program in the account's workspace and issues its API key.
func (s *Server) CliInit(ctx context.Context, req gen.CliInitRequestObject) (gen.CliInitResponseObject, error) {
	a, err := s.cliAccount(ctx, "Authentication required — run reftrack login first", "Invalid or expired token — run the login command again")
	if err != nil {
		return nil, err
	}
	workspaces, err := accounts.Memberships(ctx, s.deps.DB, a.ID)
	if err != nil {
		return nil, err
	}
	if len(workspaces) == 0 {
		return nil, apierr.Forbidden("No advertiser found for this account — run the login command again")
	}
	body, err := parseBody((*json.RawMessage)(req.Body))
	if err != nil {
		return nil, err
	}
	workspace := workspaces[0]
	if id, present, ok := body.id("advertiser_id"); present {
		found := false
		for _, w := range workspaces {
			if ok && w.WorkspaceID == id {
				workspace, found = w, true
			}
		}
		if !found {
			return nil, apierr.Forbidden("advertiser_id does not match the authenticated account")
		}
	}
	if !accounts.Can(workspace.Role, accounts.ActionProgramWrite) {
		return nil, apierr.Forbidden("Your role (" + workspace.Role + ") does not allow this (" + accounts.ActionProgramWrite + ")")
	}

	name, _, _ := body.str("name")
	domain, _, _ := body.str("domain")
	ctype, _, _ := body.str("commission_type")
	_, ratePresent := body["commission_rate"]
	if strings.TrimSpace(name) == "" || strings.TrimSpace(domain) == "" || ctype == "" || !ratePresent {
		return nil, apierr.BadRequest("Missing required fields: name, domain, commission_type, commission_rate")
	}
	if !commission.Valid(ctype) {
		return nil, apierr.BadRequest("Invalid commission_type: " + ctype + ". Valid: percent, fixed, recurring_percent, recurring_fixed")
	}
	rate, ok := positiveDecimal(body["commission_rate"])
	if !ok {
		return nil, apierr.BadRequest("commission_rate must be a positive number")
	}
	n := programs.New{WorkspaceID: workspace.WorkspaceID, Name: strings.TrimSpace(name), Domain: strings.TrimSpace(domain),
		CommissionType: ctype, CommissionRate: rate, CreatedBy: a.ID}
	if v, present, ok := body.integer("cookie_duration"); present {
		if !ok || v < 1 || v > 3650 {
			return nil, apierr.BadRequest("cookie_duration must be a whole number of days from 1 to 3650")
		}
		days := int(v)
		n.CookieWindowDays = &days
	}
	if v, present, ok := body.integer("duration_months"); present {
		if !ok || v < 1 || v > 1200 {
			return nil, apierr.BadRequest("duration_months must be a whole number of months from 1 to 1200")
		}
		months := int(v)
		n.DurationMonths = &months
	}
	p, key, err := programs.Create(ctx, s.deps.DB, n)
	if err != nil {
		return nil, err
	}
	out := gen.CliInitResponse{}
	out.Data.ProgramId, out.Data.ApiKey, out.Data.ProgramSlug, out.Data.Domain = strconv.FormatInt(p.ID, 10), key, p.Slug, p.Domain
	return gen.CliInit201JSONResponse{Body: out}, nil
}

// positiveDecimal reads a JSON number (not a string) greater than zero, as exact decimal text.
func positiveDecimal(raw json.RawMessage) (string, bool) {
	if t := strings.TrimSpace(string(raw)); t == "" || t[0] == '"' {
		return "", false // json.Number would accept a numeric string
	}
	var n json.Number
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return "", false
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || r.Sign() <= 0 || r.Cmp(big.NewRat(1_000_000_000, 1)) >= 0 {
		return "", false
	}
	return r.FloatString(4), true
}

// CliListPrograms lists the programs of the account's workspaces.
func (s *Server) CliListPrograms(ctx context.Context, _ gen.CliListProgramsRequestObject) (gen.CliListProgramsResponseObject, error) {
	a, err := s.cliAccount(ctx, "Missing Authorization header. Run the login command first.", "Invalid or expired token. Run the login command to refresh.")
	if err != nil {
		return nil, err
	}
	rows, err := programs.OfAccount(ctx, s.deps.DB, a.ID)
	if err != nil {
		return nil, err
	}
	out := gen.CliProgramsResponse{}
	out.Data = make([]struct {
		Commission string    `json:"commission"`
		CreatedAt  time.Time `json:"created_at"`
		Domain     string    `json:"domain"`
		Id         int64     `json:"id"`
		Name       string    `json:"name"`
		Partners   int       `json:"partners"`
		Status     string    `json:"status"`
	}, len(rows))
	for i, r := range rows {
		d := &out.Data[i]
		d.Id, d.Name, d.Domain, d.Status, d.Partners, d.CreatedAt = r.ID, r.Name, r.Domain, r.Status, r.Partners, r.CreatedAt.UTC()
		d.Commission = commissionDisplay(r.CommissionType, r.CommissionRate)
	}
	return gen.CliListPrograms200JSONResponse{Body: out}, nil
}

// commissionDisplay is "30%", "$25.00", "10% recurring".
func commissionDisplay(ctype, rate string) string {
	r, ok := new(big.Rat).SetString(rate)
	if !ok {
		return rate
	}
	var s string
	if strings.HasSuffix(ctype, "percent") {
		s = strings.TrimRight(strings.TrimRight(r.FloatString(4), "0"), ".") + "%"
	} else {
		s = "$" + r.FloatString(2)
	}
	if commission.Recurring(ctype) {
		s += " recurring"
	}
	return s
}

// --- program-key routes --------------------------------------------------------------------------------

// cliProgram authenticates the key and checks an optional program_id against it.
func (s *Server) cliProgram(ctx context.Context, programID *string) (int64, error) {
	k, err := s.requireKey(ctx, cliKeyMessages)
	if err != nil {
		return 0, err
	}
	if programID != nil && *programID != "" && *programID != strconv.FormatInt(k.ProgramID, 10) {
		return 0, apierr.Forbidden("program_id does not match the API key")
	}
	return k.ProgramID, nil
}

// CliStatus answers the key's program status.
func (s *Server) CliStatus(ctx context.Context, req gen.CliStatusRequestObject) (gen.CliStatusResponseObject, error) {
	programID, err := s.cliProgram(ctx, req.Params.ProgramId)
	if err != nil {
		return nil, err
	}
	p, err := programs.Get(ctx, s.deps.DB, programID)
	if err != nil {
		return nil, err
	}
	out := gen.CliStatusResponse{Warnings: wireWarnings(s.warnings(ctx))}
	d := &out.Data
	d.ProgramId, d.Name, d.Domain = p.ID, p.Name, p.Domain
	counts, err := readiness.RecentActivity(ctx, s.deps.DB, programID, s.now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	d.DnsVerified = counts.DNSVerified
	d.RecentEvents.Clicks24h, d.RecentEvents.Leads24h, d.RecentEvents.Sales24h = counts.Clicks, counts.Leads, counts.Sales
	d.ActivePartners, d.PendingCommissions = counts.ActivePartners, counts.PendingCommissions
	c, err := payments.Get(ctx, s.deps.DB, programID, payments.ProviderStripe)
	switch {
	case err == nil:
		d.StripeConnected, d.StripeChargesEnabled = true, c.ChargesEnabled
	case !errors.Is(err, payments.ErrNotConnected):
		return nil, err
	}
	return gen.CliStatus200JSONResponse{Body: out}, nil
}

// CliTestEvent records a test event or runs the synthetic chain.
func (s *Server) CliTestEvent(ctx context.Context, req gen.CliTestEventRequestObject) (gen.CliTestEventResponseObject, error) {
	k, err := s.requireKey(ctx, cliKeyMessages)
	if err != nil {
		return nil, err
	}
	body, err := parseBody((*json.RawMessage)(req.Body))
	if err != nil {
		return nil, err
	}
	if id, present, ok := body.id("program_id"); present && (!ok || id != k.ProgramID) {
		return nil, apierr.Forbidden("program_id does not match the API key")
	}
	runner := &synthetic.Runner{DB: s.deps.DB, Log: s.deps.Logger, Click: s.clicks.Record, Now: s.now}
	out := gen.CliTestEventResponse{Warnings: wireWarnings(s.warnings(ctx))}
	if t, _, _ := body.str("type"); t == "chain" {
		ch, err := runner.RunChain(ctx, k.ProgramID)
		var capped *synthetic.CapError
		if errors.As(err, &capped) {
			secs := max(int(capped.RetryAfter.Round(time.Second)/time.Second), 1)
			e := apierr.NewTyped(http.StatusTooManyRequests, "rate_limited", "Too many synthetic chains (max 10/program/hour).").
				WithRetryAfter(secs)
			e.WithStatus = true
			return nil, e
		}
		if err != nil {
			return nil, apierr.Internal("Failed to run synthetic chain", err)
		}
		res := gen.CliChainResult{Type: gen.Chain, ShortCode: ch.ShortCode, CustomerKey: ch.CustomerKey,
			Verdict:    gen.ChainVerdict{Click: gen.StepVerdict(ch.Click), Lead: gen.StepVerdict(ch.Lead), Sale: gen.StepVerdict(ch.Sale)},
			Attributed: ch.Attributed()}
		if err := out.Data.FromCliChainResult(res); err != nil {
			return nil, err
		}
		s.metrics.Event("synthetic_chain", true)
		return gen.CliTestEvent200JSONResponse{Body: out}, nil
	}
	et, _, _ := body.str("event_type")
	if et != "click" && et != "lead" && et != "sale" {
		shown := et
		if raw, present := body["event_type"]; present && et == "" {
			shown = string(raw)
		}
		return nil, apierr.BadRequest(fmt.Sprintf("Invalid event_type: %s. Valid: click, lead, sale", shown))
	}
	one, err := runner.One(ctx, k.ProgramID, et)
	if err != nil {
		return nil, err
	}
	res := gen.CliTestEventResult{EventType: gen.CliTestEventResultEventType(one.EventType), EventId: one.EventID,
		Received: true, Attributed: one.Attributed, Message: one.Message}
	if err := out.Data.FromCliTestEventResult(res); err != nil {
		return nil, err
	}
	return gen.CliTestEvent200JSONResponse{Body: out}, nil
}
