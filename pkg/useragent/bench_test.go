package useragent

import (
	"testing"

	"github.com/x-way/crawlerdetect"
)

const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"

func BenchmarkParseUncached(b *testing.B) {
	for b.Loop() {
		Parse(iphone)
	}
}

func BenchmarkParserCached(b *testing.B) {
	p := NewParser(1024)
	for b.Loop() {
		p.Parse(iphone)
	}
}

// The Unique benchmarks go through the 2,600 browser User-Agents of the corpus in turn, each call a
// different one, as clicks that each bring a User-Agent of their own.

func BenchmarkParseUnique(b *testing.B) { benchUnique(b, Parse) }

// BenchmarkParseUniqueReference is Parse as it was (crawlerdetect's regular expressions).
func BenchmarkParseUniqueReference(b *testing.B) { benchUnique(b, parseReference) }

// BenchmarkParserUnique: every call misses the cache (2,600 User-Agents in turn through 1,024 places).
func BenchmarkParserUnique(b *testing.B) { benchUnique(b, NewParser(1024).Parse) }

// The crawler check alone, fast and crawlerdetect's own.
func BenchmarkCrawlerUnique(b *testing.B) { benchUnique(b, isCrawler) }

func BenchmarkCrawlerUniqueReference(b *testing.B) { benchUnique(b, crawlerdetect.IsCrawler) }

func benchUnique[T any](b *testing.B, parse func(string) T) {
	uas := corpus(b, "devices-sample.txt")
	parse(uas[0]) // the fast path's lists are compiled on first use
	i := 0
	for b.Loop() {
		parse(uas[i%len(uas)])
		i++
	}
}
