package api_test

import (
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// FuzzPerformance fuzzes both report routes by their raw query (each input is sent to both): the checks
// are the other targets' (fuzz_test.go): no 5xx, an answer that fits the spec, the platform envelope.
func FuzzPerformance(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	for _, q := range []string{"", "period=7d", "period=90d&currency=EUR", "period=all&currency=VND", "period=1y", "period=ALL", "currency=usd",
		"currency=", "period=7d&period=30d", "sort=clicks&order=asc&limit=1", "sort=conversion_rate&limit=100", "sort=average_order_cents&order=desc",
		"limit=0", "limit=101", "limit=-1", "limit=1e2", "limit=99999999999999999999", "sort=", "order=", "sort=name", "sort=clicks%3BDROP",
		"%00", "a%00b=1", "%ff", "%zz", "%", "%e2%82", "a;b", manyFields(999), noise(3000), "\xff", "\x00"} {
		f.Add(q)
	}
	account := apitest.Bearer(e.seed.AccountToken)
	program := "/api/v1/programs/" + itoa(e.seed.ProgramID)
	f.Fuzz(func(t *testing.T, query string) {
		for _, path := range []string{program + "/performance", program + "/performance/partners"} {
			req, err := http.NewRequest(http.MethodGet, e.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.RawQuery = queryText(query)
			req.Header.Set(account[0], account[1])
			e.exchange(t, req, false)
		}
	})
}
