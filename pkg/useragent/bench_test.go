package useragent

import "testing"

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
