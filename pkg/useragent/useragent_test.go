package useragent

import "testing"

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ua string
		want     Device
	}{
		{"desktop Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			Device{Type: "desktop", OS: "Windows", Browser: "Chrome"}},
		{"iPhone Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
			Device{Type: "mobile", OS: "iOS", Browser: "Safari"}},
		{"iPad", "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
			Device{Type: "tablet", OS: "iOS", Browser: "Safari"}},
		{"Android Firefox", "Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0",
			Device{Type: "mobile", OS: "Android", Browser: "Firefox"}},
		{"empty", "", Device{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.ua); got != tt.want {
				t.Errorf("Parse = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBotsAndLinkPreviews(t *testing.T) {
	t.Parallel()
	for _, ua := range []string{
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		"Slackbot 1.0 (+https://api.slack.com/robots)",
		"Twitterbot/1.0",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
		"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		"WhatsApp/2.23.20.0",
		"TelegramBot (like TwitterBot)",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"curl/8.5.0",
	} {
		if d := Parse(ua); !d.Bot || d.Type != "bot" {
			t.Errorf("Parse(%q) = %+v, want a bot", ua, d)
		}
	}
}

func TestParserCachesAndAgrees(t *testing.T) {
	t.Parallel()
	p := NewParser(2)
	for _, ua := range []string{"Twitterbot/1.0", iphone, "Twitterbot/1.0", "", iphone} {
		if got, want := p.Parse(ua), Parse(ua); got != want {
			t.Errorf("cached Parse(%q) = %+v, want %+v", ua, got, want)
		}
	}
	if p.cache.Len() != 2 {
		t.Errorf("cache holds %d entries, want its bound 2", p.cache.Len())
	}
}
