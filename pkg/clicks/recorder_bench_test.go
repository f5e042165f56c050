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
func BenchmarkRecorder(b *testing.B) {
	d := dbtest.New(b)
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
