package clicks_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/useragent"
)

// BenchmarkRecorder measures the click write path alone (no HTTP): many concurrent clicks through the
// batching recorder into a real Postgres.
func BenchmarkRecorder(b *testing.B) { benchRecorder(b, dbtest.New(b)) }

// benchRecorder sends b.N clicks of a seeded program through the recorder into d, 32 per core at once.
func benchRecorder(b *testing.B, d *dbtest.Database) {
	r, err := seed.Run(context.Background(), d.DB, seed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rec := clicks.NewRecorder(d.DB, slog.New(slog.NewTextHandler(io.Discard, nil)), 2, 128, nil)
	defer rec.Close()
	var n atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			_, err := rec.Record(context.Background(), clicks.Input{
				AffiliateURL: r.AffiliateURL, UserAgent: "Mozilla/5.0", IP: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250+1),
				Device: useragent.Device{Type: "desktop", OS: "Windows", Browser: "Chrome"},
			})
			if err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "clicks/s")
}

// BenchmarkRecordArgs measures the Go side of a full batch's arguments (128 browser clicks), the part of
// a click's server CPU that named inputs add.
func BenchmarkRecordArgs(b *testing.B) {
	in := make([]clicks.RecordInput, clicks.MaxBatch)
	text := func(s string) *string { return &s }
	for i := range in {
		in[i] = clicks.RecordInput{Aff: "abc123", Visitor: make([]byte, 32), ClickID: "2611VLdvuE52RWYhrO8NdnO0mA",
			AffiliateURL: text("https://shop.example.com/landing?aff=abc123&utm_source=x"), SessionID: text("s-1234567890"),
			PageURL: text("https://shop.example.com/landing"), PageTitle: text("Shop — landing"), GeoCountry: text("DE"),
			DeviceType: text("desktop"), DeviceOS: text("Windows"), Browser: text("Chrome"),
			UserAgent: text("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
			IP:        text("203.0.113.7"), ScreenRes: text("1920x1080"), Viewport: text("1280x720"), Language: text("de-DE"), Timezone: text("Europe/Berlin")}
	}
	for b.Loop() {
		clicks.RecordCall.Args(in, clicks.RecordFixed{RepeatSeconds: 3600})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/click")
}

// BenchmarkRecorderPerformanceTriggers is BenchmarkRecorder with and without the performance counts'
// triggers on clicks (pkg/events/sql.Triggers, issue 30), each on a database of its own: what those
// triggers cost the click write path. Run with -count for the spread; the ratio is what to read.
func BenchmarkRecorderPerformanceTriggers(b *testing.B) {
	for _, with := range []bool{true, false} {
		name := "with"
		if !with {
			name = "without"
		}
		b.Run(name, func(b *testing.B) {
			d := dbtest.New(b)
			if !with {
				for _, event := range []string{"insert", "update", "delete"} {
					if _, err := d.DB.Exec(`DROP TRIGGER performance_clicks_` + event + ` ON clicks`); err != nil {
						b.Fatal(err)
					}
				}
			}
			benchRecorder(b, d)
		})
	}
}
