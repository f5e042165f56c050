package useragent

import (
	"strings"

	"github.com/mileusna/useragent"
	"github.com/x-way/crawlerdetect"
)

// parseReference is Parse as it was before the fast crawler check, kept as the reference the tests compare
// Parse with: crawlerdetect's own IsCrawler.
func parseReference(ua string) Device { return parseReferenceWith(ua, crawlerdetect.IsCrawler) }

// parseReferenceWith is parseReference with crawlerdetect's verdict given: under the race detector its
// regular expressions take some 30 ms per string, and the corpus files say what its verdict is on each
// line (as crawlerdetect's own tests of this version hold).
func parseReferenceWith(ua string, isCrawler func(string) bool) Device {
	if strings.TrimSpace(ua) == "" {
		return Device{}
	}
	p := useragent.Parse(ua)
	d := Device{OS: p.OS, Browser: p.Name, Bot: p.Bot || isCrawler(ua)}
	switch {
	case d.Bot:
		d.Type = "bot"
	case p.Tablet:
		d.Type = "tablet"
	case p.Mobile:
		d.Type = "mobile"
	case p.Desktop:
		d.Type = "desktop"
	}
	return d
}
