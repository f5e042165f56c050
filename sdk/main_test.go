package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"testing"

	"github.com/reftrack/reftrack/pkg/apitest"
	"github.com/reftrack/reftrack/pkg/seed"
)

// shared is the server the examples talk to; tests start their own.
var shared struct {
	server *apitest.Shared
	prog   seed.Result
	clicks atomic.Int64
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	sh, err := apitest.StartShared(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "examples server:", err)
		return 1
	}
	prog, err := seed.Run(ctx, sh.DB.DB, seed.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "examples seed:", err)
		sh.Close()
		return 1
	}
	shared.server, shared.prog = sh, prog
	// The examples configure the SDK from the environment, and its default HTTP client goes through
	// http.DefaultTransport: routing that through the spec-checking client checks their answers too.
	os.Setenv("REFTRACK_BASE_URL", sh.URL)
	os.Setenv("REFTRACK_API_KEY", prog.APIKey)
	http.DefaultTransport = sh.Client.Transport

	code := m.Run()
	if err := sh.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "examples server:", err)
		return 1
	}
	return code
}

// clickIDFromSignupForm stands for the svc_click_id cookie a brand's front end forwards with its sign-up
// form: it records a click on the shared program's referral link, as the browser tracker does.
func clickIDFromSignupForm() string {
	body, _ := json.Marshal(map[string]string{"affiliate_url": shared.prog.AffiliateURL})
	req, _ := http.NewRequest(http.MethodPost, shared.server.URL+"/api/v1/track/click", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	// A distinct browser per click, so that no two examples share a visitor.
	req.Header.Set("User-Agent", fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 example-%d", shared.clicks.Add(1)))
	res, err := shared.server.Client.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var out struct {
		ClickID string `json:"click_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		panic(fmt.Sprintf("click: %d %v", res.StatusCode, err))
	}
	return out.ClickID
}
