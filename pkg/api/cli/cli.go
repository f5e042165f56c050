// Package cli is the HTTP area of the routes the `reftrack` command-line client uses (/api/v1/cli/*): its
// browser login, program creation and listing, status and test events.
package cli

import (
	"context"
	"log/slog"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/programbody"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/programs"
)

// CLI implements the CLI operations of the strict server interface.
type CLI struct {
	DB  *sqlx.DB
	Log *slog.Logger
	Now func() time.Time
	// BaseURL is this service's public address, for the links a login hands out.
	BaseURL string
	// Verifier checks the id_tokens of the configured (or development) issuer.
	Verifier logins.IDTokenVerifier
	// Clicks records the synthetic chain's clicks through the click route's recorder.
	Clicks  *clicks.Recorder
	Metrics *metrics.Metrics
	// DNS looks the program's domain verification record up (status requests).
	DNS programs.TXTResolver
}

// --- login session -------------------------------------------------------------------------------------

// CliAuthStart creates a login session; the user opens auth_url, the CLI polls poll_url.
func (h *CLI) CliAuthStart(ctx context.Context, _ gen.CliAuthStartRequestObject) (gen.CliAuthStartResponseObject, error) {
	sess, err := logins.Start(ctx, h.DB, h.Now())
	if err != nil {
		return nil, err
	}
	state := url.QueryEscape(sess.State)
	out := gen.CliAuthStartResponse{}
	out.Data.State = sess.State
	out.Data.AuthUrl = h.BaseURL + "/login?state=" + state
	out.Data.PollUrl = h.BaseURL + "/api/v1/cli/auth/poll?state=" + state
	out.Data.ExpiresAt = sess.ExpiresAt.UTC()
	return gen.CliAuthStart200JSONResponse{Body: out}, nil
}

// CliAuthCallback completes a pending session with a verified id_token.
func (h *CLI) CliAuthCallback(ctx context.Context, req gen.CliAuthCallbackRequestObject) (gen.CliAuthCallbackResponseObject, error) {
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	state, _ := req.Body.State.Str()
	token, _ := req.Body.IdToken.Str()
	if state == "" || token == "" {
		return nil, apierr.Invalid("Missing required fields: state, id_token")
	}
	acct, err := logins.SignInCLI(ctx, h.DB, h.Verifier, state, token, h.Now())
	if err != nil {
		return nil, err
	}
	out := gen.CliAuthCallbackResponse{}
	out.Data.Status = gen.CliAuthCallbackResponseDataStatusComplete
	out.Data.Email = acct.Email
	return gen.CliAuthCallback200JSONResponse{Body: out}, nil
}

// CliAuthPoll answers the session's status, and the login token once.
func (h *CLI) CliAuthPoll(ctx context.Context, req gen.CliAuthPollRequestObject) (gen.CliAuthPollResponseObject, error) {
	if req.Params.State == nil || *req.Params.State == "" {
		return nil, apierr.Invalid("Missing state parameter")
	}
	status, tok, err := logins.Poll(ctx, h.DB, *req.Params.State, h.Now())
	if err != nil {
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

// CliInit creates a program in the account's workspace (accounts.WorkspaceFor) and issues its API key.
func (h *CLI) CliInit(ctx context.Context, req gen.CliInitRequestObject) (gen.CliInitResponseObject, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	ws, err := accounts.WorkspaceFor(ctx, h.DB, a.ID, workspaceClaim(ctx, b.AdvertiserId), accounts.ActionProgramWrite)
	if err != nil {
		return nil, err
	}
	n, err := programbody.New(programbody.Body{Name: b.Name, Domain: b.Domain, CommissionType: b.CommissionType,
		CommissionRate: b.CommissionRate, DurationMonths: b.DurationMonths, Cookie: b.CookieDuration, CookieField: "cookie_duration"})
	if err != nil {
		return nil, err
	}
	n.WorkspaceID, n.CreatedBy = ws.WorkspaceID, a.ID
	p, key, err := programs.Create(ctx, h.DB, n)
	if err != nil {
		return nil, err
	}
	out := gen.CliInitResponse{}
	out.Data.ProgramId, out.Data.ApiKey, out.Data.ProgramSlug, out.Data.Domain = strconv.FormatInt(p.ID, 10), key, p.Slug, p.Domain
	return gen.CliInit201JSONResponse{Body: out}, nil
}

// workspaceClaim is the workspace the body names (advertiser_id: 0, no workspace's, when it is not an
// id), or why the body could not be read.
func workspaceClaim(ctx context.Context, advertiser jsonbody.Value) accounts.WorkspaceClaim {
	if err := request.ObjectBody(ctx); err != nil {
		return accounts.WorkspaceClaim{Unread: err}
	}
	id, _ := advertiser.ID()
	return accounts.WorkspaceClaim{Named: advertiser.Sent(), ID: id}
}

// CliListPrograms lists the programs of the account's workspaces.
func (h *CLI) CliListPrograms(ctx context.Context, _ gen.CliListProgramsRequestObject) (gen.CliListProgramsResponseObject, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := programs.OfAccount(ctx, h.DB, a.ID)
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

// programOfKey is the key's program, checking an optional program_id against it.
func programOfKey(ctx context.Context, programID *string) (int64, error) {
	k, err := auth.ProgramKey(ctx)
	if err != nil {
		return 0, err
	}
	if programID != nil && *programID != "" && *programID != strconv.FormatInt(k.ProgramID, 10) {
		return 0, apikeys.ErrProgramMismatch
	}
	return k.ProgramID, nil
}

// CliLogout revokes the login token the request carries (`reftrack logout`); the account's other tokens
// are left alone.
func (h *CLI) CliLogout(ctx context.Context, _ gen.CliLogoutRequestObject) (gen.CliLogoutResponseObject, error) {
	if _, err := auth.SignedIn(ctx); err != nil {
		return nil, err
	}
	token := auth.ParseBearer(request.From(ctx).Header.Get("Authorization")).Token
	if err := logins.Revoke(ctx, h.DB, token, h.Now()); err != nil {
		return nil, err
	}
	var out gen.CliLogout200JSONResponse
	out.Body.Data.LoggedOut = true
	return out, nil
}
