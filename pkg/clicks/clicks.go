// Package clicks records referral clicks: the aff value of a landing URL is matched to a referral link,
// and the click is stored with its device and location. This is the hot path of the service.
package clicks

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/geo"
	"github.com/reftrack/reftrack/pkg/useragent"
)

// Errors, one per documented refusal.
var (
	ErrAffiliateURLRequired = errors.New("affiliate_url is required")
	ErrInvalidAffiliateURL  = errors.New("invalid affiliate_url")
	ErrNoAff                = errors.New("no aff parameter in affiliate_url")
	ErrLinkNotFound         = errors.New("referral link not found")
	ErrLinkMisconfigured    = errors.New("referral link has no partner or program")
	ErrLinkDisabled         = errors.New("referral link is disabled")
	ErrOriginNotAllowed     = errors.New("origin not allowed for this program")
)

// RepeatWindow is how long a repeat click by the same visitor on the same link returns the first click.
const RepeatWindow = time.Hour

// Input is one click as reported.
type Input struct {
	AffiliateURL string
	PageURL      string
	PageTitle    string
	ReferrerURL  string
	SessionID    string
	ScreenRes    string
	Viewport     string
	Language     string
	Timezone     string
	UserAgent    string
	IP           string
	Device       useragent.Device
	Geo          geo.Location
	// Origin is the browser's Origin header ("" from servers).
	Origin string
	Test   bool
}

// Result is the recorded (or repeated) click.
type Result struct {
	ID               int64
	ClickID          string
	ProgramID        int64
	PartnerID        int64
	ShortLink        string
	CookieWindowDays int
	// Created is false when a repeat click returned the visitor's recent click.
	Created bool
}

// Aff extracts the aff value of an affiliate URL.
func Aff(affiliateURL string) (string, error) {
	if affiliateURL == "" {
		return "", ErrAffiliateURLRequired
	}
	u, err := url.Parse(affiliateURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", ErrInvalidAffiliateURL
	}
	aff := u.Query().Get("aff")
	if aff == "" {
		return "", ErrNoAff
	}
	return aff, nil
}

type link struct {
	ID               int64          `db:"id"`
	Enabled          bool           `db:"enabled"`
	PartnerID        *int64         `db:"partner_id"`
	ProgramID        *int64         `db:"program_id"`
	CookieWindowDays *int           `db:"cookie_window_days"`
	AllowedOrigins   pq.StringArray `db:"allowed_origins"`
}

// LinkError carries what the caller may say about a refused link (the origin refused).
type LinkError struct {
	Err    error
	Origin string
}

func (e *LinkError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.Origin) }
func (e *LinkError) Unwrap() error { return e.Err }

// Record stores a click, or returns the visitor's click on the same link from the last RepeatWindow.
//
// It is one statement, one round trip: find the link, refuse it (unknown, misconfigured, origin not
// allowed, disabled) or find the visitor's recent click, else insert. The link's state is read in the
// same statement that records, so a link turned off records nothing from that moment.
func Record(ctx context.Context, db *sqlx.DB, in Input) (Result, error) {
	aff, err := Aff(in.AffiliateURL)
	if err != nil {
		return Result{}, err
	}
	clickID, err := NewClickID()
	if err != nil {
		return Result{}, err
	}
	var ip any
	if net.ParseIP(in.IP) != nil {
		ip = in.IP
	}
	visitor := sha256.Sum256([]byte(in.IP + "\x00" + in.UserAgent))
	var row struct {
		link
		OriginOK bool    `db:"origin_ok"`
		NewID    *int64  `db:"new_id"`
		NewClick *string `db:"new_click"`
		OldID    *int64  `db:"old_id"`
		OldClick *string `db:"old_click"`
	}
	err = db.GetContext(ctx, &row, `
		WITH link AS (
			SELECT l.id, l.enabled, l.partner_id, l.program_id, p.cookie_window_days, p.allowed_origins,
				COALESCE($3 = '' OR $3 = ANY(p.allowed_origins), false) AS origin_ok
			FROM referral_links l LEFT JOIN programs p ON p.id = l.program_id
			WHERE l.short_link = $1
		), ok AS (
			SELECT * FROM link WHERE enabled AND origin_ok AND partner_id IS NOT NULL AND program_id IS NOT NULL
		), prev AS (
			SELECT c.id, c.click_id FROM clicks c JOIN ok ON c.link_id = ok.id
			WHERE c.visitor_hash = $2 AND c.is_test = $4 AND c.click_timestamp > now() - $5 * interval '1 second'
			ORDER BY c.click_timestamp DESC LIMIT 1
		), ins AS (
			INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url, session_id, page_url, page_title,
				referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
				visitor_hash, screen_resolution, viewport_size, language, timezone, is_test, is_bot)
			SELECT $6, ok.program_id, ok.id, ok.partner_id, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
				$2, $20, $21, $22, $23, $4, $24
			FROM ok WHERE NOT EXISTS (SELECT 1 FROM prev)
			RETURNING id, click_id
		)
		SELECT link.id, link.enabled, link.partner_id, link.program_id, link.cookie_window_days, link.allowed_origins,
			link.origin_ok, ins.id AS new_id, ins.click_id AS new_click, prev.id AS old_id, prev.click_id AS old_click
		FROM link LEFT JOIN ins ON true LEFT JOIN prev ON true`,
		aff, visitor[:], in.Origin, in.Test, int64(RepeatWindow/time.Second),
		clickID, clip(in.AffiliateURL), null(in.SessionID), null(in.PageURL), null(in.PageTitle), null(in.ReferrerURL),
		null(in.Geo.Country), null(in.Geo.Region), null(in.Geo.City), null(in.Device.Type), null(in.Device.OS),
		null(in.Device.Browser), null(in.UserAgent), ip, null(in.ScreenRes), null(in.Viewport), null(in.Language),
		null(in.Timezone), in.Device.Bot)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Result{}, ErrLinkNotFound
	case err != nil:
		return Result{}, fmt.Errorf("record click: %w", err)
	case row.PartnerID == nil || row.ProgramID == nil || row.CookieWindowDays == nil:
		return Result{}, ErrLinkMisconfigured
	case !row.OriginOK:
		return Result{}, &LinkError{Err: ErrOriginNotAllowed, Origin: in.Origin}
	case !row.Enabled:
		return Result{}, ErrLinkDisabled
	}
	res := Result{ProgramID: *row.ProgramID, PartnerID: *row.PartnerID, ShortLink: aff, CookieWindowDays: *row.CookieWindowDays}
	switch {
	case row.NewID != nil:
		res.ID, res.ClickID, res.Created = *row.NewID, *row.NewClick, true
	case row.OldID != nil:
		res.ID, res.ClickID = *row.OldID, *row.OldClick
	default:
		return Result{}, errors.New("record click: neither recorded nor found")
	}
	return res, nil
}

// NewClickID is 128 random bits, URL-safe.
func NewClickID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// maxText bounds every text a browser sends us.
const maxText = 2048

// clip cuts overlong text at a character boundary.
func clip(s string) string {
	if len(s) > maxText {
		s = strings.ToValidUTF8(s[:maxText], "")
	}
	return s
}

// null stores "" as NULL and clips the rest.
func null(s string) any {
	if s == "" {
		return nil
	}
	return clip(s)
}
