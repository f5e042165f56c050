package tracking

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/geo"
)

// The refusals of the optional text the tracker sends with a click.
var (
	errPageURLNotString          = notString("page_url")
	errPageTitleNotString        = notString("page_title")
	errReferrerURLNotString      = notString("referrer_url")
	errSessionIDNotString        = notString("session_id")
	errScreenResolutionNotString = notString("screen_resolution")
	errViewportSizeNotString     = notString("viewport_size")
	errLanguageNotString         = notString("language")
	errTimezoneNotString         = notString("timezone")
	errUserAgentNotString        = notString("user_agent")
)

// TrackClick records a referral click.
func (h *Tracking) TrackClick(ctx context.Context, req gen.TrackClickRequestObject) (gen.TrackClickResponseObject, error) {
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	in, named, err := h.clickInput(ctx, req.Body)
	if err != nil {
		return nil, err
	}
	claim, err := h.testClaim(ctx, in.Test, named)
	if err != nil {
		return nil, err
	}
	res, err := h.Clicks.Track(ctx, in, claim)
	if err != nil {
		return nil, err
	}
	h.Metrics.Event("click", in.Test)
	out := gen.ClickResponse{Success: true, ClickId: res.ClickID, CookieWindowDays: res.CookieWindowDays,
		PartnerCode: &res.ShortLink, Warnings: wire.Warnings(ctx)}
	if in.Test {
		out.Message = wire.Ptr("Test click recorded")
		out.Data = wire.TestData(&res.ID, res.ProgramID)
	}
	return gen.TrackClick200JSONResponse{Body: out}, nil
}

// testClaim is what a test click says of its program: test mode may authenticate with the program key
// (a key that matches no program is refused); outside test mode the credential is not read.
func (h *Tracking) testClaim(ctx context.Context, test bool, named *int64) (apikeys.Claim, error) {
	if !test {
		return apikeys.Claim{}, nil
	}
	key, hasKey, err := h.Auth.OptionalKey(ctx)
	if err != nil {
		return apikeys.Claim{}, err
	}
	return apikeys.ClaimOf(key, hasKey, named), nil
}

// clickInput reads the click's body and request (the device from the User-Agent, the place from trusted
// proxies' headers), with the program additional_data names.
func (h *Tracking) clickInput(ctx context.Context, b *gen.ClickRequest) (clicks.Input, *int64, error) {
	var r jsonbody.Reader
	r.Check(b.AffiliateUrl.Sent(), clicks.ErrAffiliateURLRequired)
	affURL, _ := r.String(b.AffiliateUrl, clicks.ErrInvalidAffiliateURL)
	test, named := additionalData(&r, b.AdditionalData)
	m := request.From(ctx)
	in := clicks.Input{AffiliateURL: affURL, IP: m.IP, Origin: m.Header.Get("Origin"), Test: test}
	// The optional text the tracker sends with a click.
	in.PageURL, _ = r.String(b.PageUrl, errPageURLNotString)
	in.PageTitle, _ = r.String(b.PageTitle, errPageTitleNotString)
	in.ReferrerURL, _ = r.String(b.ReferrerUrl, errReferrerURLNotString)
	in.SessionID, _ = r.String(b.SessionId, errSessionIDNotString)
	in.ScreenRes, _ = r.String(b.ScreenResolution, errScreenResolutionNotString)
	in.Viewport, _ = r.String(b.ViewportSize, errViewportSizeNotString)
	in.Language, _ = r.String(b.Language, errLanguageNotString)
	in.Timezone, _ = r.String(b.Timezone, errTimezoneNotString)
	bodyUA, _ := r.String(b.UserAgent, errUserAgentNotString)
	if err := r.Err(); err != nil {
		return clicks.Input{}, nil, err
	}
	if in.UserAgent = m.Header.Get("User-Agent"); in.UserAgent == "" {
		in.UserAgent = bodyUA
	}
	in.Device = h.Devices.Parse(in.UserAgent)
	if m.ViaTrustedProxy {
		in.Geo = geo.FromHeaders(m.Header)
	}
	return in, named, nil
}
