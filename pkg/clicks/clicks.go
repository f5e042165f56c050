// Package clicks records referral clicks: the aff value of a landing URL is matched to a referral link,
// and the click is stored with its device and location. This is the hot path of the service.
package clicks

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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

// LinkError carries what the caller may say about a refused link (the origin refused).
type LinkError struct {
	Err    error
	Origin string
}

func (e *LinkError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.Origin) }
func (e *LinkError) Unwrap() error { return e.Err }

// NewClickID is the month it is made in (YYMM, UTC), then 128 random bits, URL-safe: 26 characters.
// The month names the click's partition (the schema's clicks_month), so that a lookup by click_id
// reads one partition's index.
func NewClickID(now time.Time) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return now.UTC().Format("0601") + base64.RawURLEncoding.EncodeToString(b[:]), nil
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

// A sale or a lead marks its click converted through this package's database function clicks_convert
// (pkg/clicks/sql), called by their statements.
