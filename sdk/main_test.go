package sdk_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// The examples are documentation that runs: they report to a real server, configured from the
// environment as a brand's backend would be. The server lives in another module, so they run only when
// one is given: the server module's TestSDKExamples (pkg/e2e) starts one, seeds a fresh program and runs
// them here with these variables set.
var exampleEnv = []string{"REFTRACK_BASE_URL", "REFTRACK_API_KEY", "REFTRACK_AFFILIATE_URL"}

func TestMain(m *testing.M) {
	flag.Parse()
	for _, name := range exampleEnv {
		if os.Getenv(name) == "" {
			skip := "^Example"
			if s := flag.Lookup("test.skip").Value.String(); s != "" {
				skip += "|" + s
			}
			if err := flag.Set("test.skip", skip); err != nil {
				panic(err)
			}
			fmt.Printf("sdk: examples not run: they need a server with a fresh program in %s (`go test -run TestSDKExamples ./pkg/e2e` at the repository root runs them)\n",
				strings.Join(exampleEnv, ", "))
			break
		}
	}
	os.Exit(m.Run())
}

var clicks atomic.Int64

// clickIDFromSignupForm stands for the svc_click_id cookie a brand's front end forwards with its sign-up
// form: it records a click on the program's referral link (REFTRACK_AFFILIATE_URL), as the browser
// tracker does.
func clickIDFromSignupForm() string {
	body, _ := json.Marshal(map[string]string{"affiliate_url": os.Getenv("REFTRACK_AFFILIATE_URL")})
	req, _ := http.NewRequest(http.MethodPost, strings.TrimRight(os.Getenv("REFTRACK_BASE_URL"), "/")+"/api/v1/track/click", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	// A distinct browser per click, so that no two examples share a visitor.
	req.Header.Set("User-Agent", fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 example-%d", clicks.Add(1)))
	res, err := http.DefaultClient.Do(req)
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
