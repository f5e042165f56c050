package api

import (
	"context"
	"errors"
	"net/http"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/geo"
)

// clickErrors maps refusals of the click route to the interface's answers.
var clickErrors = []struct {
	err error
	api func(error) *apierr.Error
}{
	{clicks.ErrAffiliateURLRequired, fixed(apierr.BadRequest("affiliate_url is required"))},
	{clicks.ErrInvalidAffiliateURL, fixed(apierr.BadRequest("Invalid affiliate_url"))},
	{clicks.ErrNoAff, fixed(apierr.BadRequest("No aff parameter found in affiliate_url"))},
	{clicks.ErrLinkNotFound, fixed(apierr.BadRequest("Referral link not found"))},
	{clicks.ErrLinkMisconfigured, fixed(apierr.BadRequest("Invalid referral link configuration"))},
	{clicks.ErrOriginNotAllowed, func(err error) *apierr.Error {
		var le *clicks.LinkError
		errors.As(err, &le)
		return originNotAllowed(le.Origin)
	}},
	{clicks.ErrLinkDisabled, fixed(linkDisabled())},
}

func fixed(e *apierr.Error) func(error) *apierr.Error { return func(error) *apierr.Error { return e } }

func originNotAllowed(origin string) *apierr.Error {
	return apierr.Forbidden("Origin " + origin + " is not allowed for this program")
}

func linkDisabled() *apierr.Error {
	e := apierr.NewTyped(http.StatusGone, "link_disabled", "This referral link has been turned off")
	e.Hint = "The partner or the brand turned this link off; no click was recorded. Ask the partner for an active link."
	e.LinkDisabled = true
	return e
}

// TrackClick records a referral click.
func (s *Server) TrackClick(ctx context.Context, req gen.TrackClickRequestObject) (gen.TrackClickResponseObject, error) {
	body, err := parseBody(req.Body)
	if err != nil {
		return nil, err
	}
	affURL, present, ok := body.str("affiliate_url")
	switch {
	case !present:
		return nil, apierr.BadRequest("affiliate_url is required")
	case !ok:
		return nil, apierr.BadRequest("Invalid affiliate_url")
	}
	ad := body.additionalData()
	if ad.test {
		// Test mode may authenticate with the program key; a key and a program_id must agree.
		key, hasKey, err := s.optionalKey(ctx)
		if err != nil {
			return nil, err
		}
		if err := checkTestProgram(ad, key.ProgramID, hasKey); err != nil {
			return nil, err
		}
	}

	m := metaFrom(ctx)
	ua := m.header.Get("User-Agent")
	if ua == "" {
		ua = body.optStr("user_agent")
	}
	in := clicks.Input{
		AffiliateURL: affURL,
		PageURL:      body.optStr("page_url"),
		PageTitle:    body.optStr("page_title"),
		ReferrerURL:  body.optStr("referrer_url"),
		SessionID:    body.optStr("session_id"),
		ScreenRes:    body.optStr("screen_resolution"),
		Viewport:     body.optStr("viewport_size"),
		Language:     body.optStr("language"),
		Timezone:     body.optStr("timezone"),
		UserAgent:    ua,
		IP:           m.ip,
		Device:       s.devices.Parse(ua),
		Origin:       m.header.Get("Origin"),
		Test:         ad.test,
	}
	if m.viaTrustedProxy {
		in.Geo = geo.FromHeaders(m.header)
	}
	res, err := s.clicks.Record(ctx, in)
	if err != nil {
		for _, row := range clickErrors {
			if errors.Is(err, row.err) {
				return nil, row.api(err)
			}
		}
		return nil, err
	}
	s.metrics.Event("click", ad.test)
	out := gen.ClickResponse{Success: true, ClickId: res.ClickID, CookieWindowDays: res.CookieWindowDays, PartnerCode: &res.ShortLink}
	if w := s.warnings(ctx); w != nil {
		out.Warnings = wireWarnings(w)
	}
	if ad.test {
		msg := "Test click recorded"
		out.Message = &msg
		out.Data = testData(res.ID, res.ProgramID)
	}
	return gen.TrackClick200JSONResponse{Body: out}, nil
}
