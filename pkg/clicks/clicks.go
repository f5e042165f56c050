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
func Record(ctx context.Context, db *sqlx.DB, in Input) (Result, error) {
	aff, err := Aff(in.AffiliateURL)
	if err != nil {
		return Result{}, err
	}
	var l link
	err = db.GetContext(ctx, &l, `SELECT l.id, l.enabled, l.partner_id, l.program_id, p.cookie_window_days, p.allowed_origins
		FROM referral_links l LEFT JOIN programs p ON p.id = l.program_id WHERE l.short_link = $1`, aff)
	if errors.Is(err, sql.ErrNoRows) {
		return Result{}, ErrLinkNotFound
	}
	if err != nil {
		return Result{}, fmt.Errorf("find referral link: %w", err)
	}
	if l.PartnerID == nil || l.ProgramID == nil || l.CookieWindowDays == nil {
		return Result{}, ErrLinkMisconfigured
	}
	if in.Origin != "" && !contains(l.AllowedOrigins, in.Origin) {
		return Result{}, &LinkError{Err: ErrOriginNotAllowed, Origin: in.Origin}
	}
	if !l.Enabled {
		return Result{}, ErrLinkDisabled
	}

	clickID, err := NewClickID()
	if err != nil {
		return Result{}, err
	}
	res := Result{ProgramID: *l.ProgramID, PartnerID: *l.PartnerID, ShortLink: aff, CookieWindowDays: *l.CookieWindowDays}
	var ip any
	if net.ParseIP(in.IP) != nil {
		ip = in.IP
	}
	visitor := sha256.Sum256([]byte(in.IP + "\x00" + in.UserAgent))
	// One round trip: the visitor's recent click on this link if there is one, else a new row.
	row := db.QueryRowxContext(ctx, `
		WITH prev AS (
			SELECT id, click_id FROM clicks
			WHERE link_id = $1 AND visitor_hash = $2 AND is_test = $3 AND click_timestamp > now() - $4 * interval '1 second'
			ORDER BY click_timestamp DESC LIMIT 1
		), ins AS (
			INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url, session_id, page_url, page_title,
				referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
				visitor_hash, screen_resolution, viewport_size, language, timezone, is_test, is_bot)
			SELECT $5, $6, $1, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $2, $21, $22, $23, $24, $3, $25
			WHERE NOT EXISTS (SELECT 1 FROM prev)
			RETURNING id, click_id
		)
		SELECT id, click_id, true FROM ins UNION ALL SELECT id, click_id, false FROM prev`,
		l.ID, visitor[:], in.Test, int64(RepeatWindow/time.Second),
		clickID, *l.ProgramID, *l.PartnerID, clip(in.AffiliateURL), null(in.SessionID), null(in.PageURL), null(in.PageTitle),
		null(in.ReferrerURL), null(in.Geo.Country), null(in.Geo.Region), null(in.Geo.City), null(in.Device.Type),
		null(in.Device.OS), null(in.Device.Browser), null(in.UserAgent), ip, null(in.ScreenRes), null(in.Viewport),
		null(in.Language), null(in.Timezone), in.Device.Bot)
	if err := row.Scan(&res.ID, &res.ClickID, &res.Created); err != nil {
		return Result{}, fmt.Errorf("record click: %w", err)
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

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
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
