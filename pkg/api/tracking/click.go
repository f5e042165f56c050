package tracking

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/geo"
)

// clickMetadata is the optional text the tracker sends with a click.
var clickMetadata = []string{"page_url", "page_title", "referrer_url", "session_id", "screen_resolution",
	"viewport_size", "language", "timezone", "user_agent"}

// TrackClick records a referral click.
func (h *Tracking) TrackClick(ctx context.Context, req gen.TrackClickRequestObject) (gen.TrackClickResponseObject, error) {
	body, err := jsonbody.Parse(req.Body)
	if err != nil {
		return nil, err
	}
	in, named, err := h.clickInput(ctx, body)
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
func (h *Tracking) clickInput(ctx context.Context, body jsonbody.Object) (clicks.Input, *int64, error) {
	affURL, present, ok := body.Str("affiliate_url")
	switch {
	case !present:
		return clicks.Input{}, nil, apierr.Invalid("affiliate_url is required")
	case !ok:
		return clicks.Input{}, nil, apierr.Invalid("Invalid affiliate_url")
	}
	ad, err := body.AdditionalData()
	if err != nil {
		return clicks.Input{}, nil, err
	}
	if err := body.CheckStrings(clickMetadata...); err != nil {
		return clicks.Input{}, nil, err
	}
	m := request.From(ctx)
	ua := m.Header.Get("User-Agent")
	if ua == "" {
		ua = body.OptStr("user_agent")
	}
	in := clicks.Input{
		AffiliateURL: affURL,
		PageURL:      body.OptStr("page_url"),
		PageTitle:    body.OptStr("page_title"),
		ReferrerURL:  body.OptStr("referrer_url"),
		SessionID:    body.OptStr("session_id"),
		ScreenRes:    body.OptStr("screen_resolution"),
		Viewport:     body.OptStr("viewport_size"),
		Language:     body.OptStr("language"),
		Timezone:     body.OptStr("timezone"),
		UserAgent:    ua,
		IP:           m.IP,
		Device:       h.Devices.Parse(ua),
		Origin:       m.Header.Get("Origin"),
		Test:         ad.Test,
	}
	if m.ViaTrustedProxy {
		in.Geo = geo.FromHeaders(m.Header)
	}
	return in, ad.ProgramID, nil
}
