// Package useragent derives a click's device fields from its User-Agent, and tells bots and link-preview
// fetchers from people, with maintained parsers (mileusna/useragent for devices, x-way/crawlerdetect for
// crawlers) rather than regular expressions of our own. crawlerdetect's verdict is computed from its own
// lists by a faster route that gives the same answer for every string (crawler.go): a click costs about
// the same whatever its User-Agent, cached or not.
package useragent

import (
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/mileusna/useragent"
)

// Device is what a click records of its browser.
type Device struct {
	Type    string // "desktop", "mobile", "tablet", "bot" or "" when unknown
	OS      string
	Browser string
	Bot     bool
}

// Parser parses User-Agents and remembers the most recent ones: real traffic repeats a small set of
// User-Agents, and a cached one costs a map lookup instead of a few microseconds.
type Parser struct {
	cache *lru.Cache[string, Device]
}

// maxLen bounds what is parsed and cached; longer strings are cut (no browser sends one).
const maxLen = 512

// NewParser returns a parser remembering up to size User-Agents. It starts compiling the crawler check's
// lists (some 40 ms, once per process) so that the first click does not wait for all of it.
func NewParser(size int) *Parser {
	c, err := lru.New[string, Device](size)
	if err != nil {
		panic(err) // only for size <= 0
	}
	go fastDetector()
	return &Parser{cache: c}
}

// Parse reads a User-Agent header.
func (p *Parser) Parse(ua string) Device {
	if len(ua) > maxLen {
		ua = ua[:maxLen]
	}
	if d, ok := p.cache.Get(ua); ok {
		return d
	}
	d := Parse(ua)
	p.cache.Add(ua, d)
	return d
}

// Parse reads a User-Agent header without caching.
func Parse(ua string) Device {
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
