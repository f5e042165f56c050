package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

const defaultServer = "http://localhost:8080"

// app is the CLI with its inputs and outputs, so tests run its commands in process.
type app struct {
	in          *bufio.Reader
	out, errOut io.Writer
	interactive bool // stdin and stderr are terminals: prompts and the spinner

	configDir    string
	server       string
	jsonOut      bool
	noBrowser    bool
	pollInterval time.Duration
	httpClient   *http.Client
	openBrowser  func(string) error
}

func newApp(in io.Reader, out, errOut io.Writer) *app {
	return &app{
		in: bufio.NewReader(in), out: out, errOut: errOut,
		interactive:  isTerminal(in) && isTerminal(errOut),
		pollInterval: 2 * time.Second,
		httpClient:   &http.Client{Timeout: 30 * time.Second},
		openBrowser:  openBrowser,
	}
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// userError is a failure told to a person: what happened and what to do next.
type userError struct {
	Message   string
	Next      string
	RequestID string
}

func (e *userError) Error() string { return e.Message }

// Render is the text printed on standard error.
func (e *userError) Render() string {
	s := "Error: " + e.Message
	if e.RequestID != "" && !strings.Contains(e.Message, e.RequestID) {
		s += "\n(request id " + e.RequestID + ")"
	}
	if e.Next != "" {
		s += "\nNext: " + e.Next
	}
	return s
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:           "reftrack",
		Short:         "The reftrack command-line client: log in, create a program, check it, send test events.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	root.PersistentFlags().StringVar(&a.server, "server", "", "reftrack server (default: REFTRACK_BASE_URL, the logged-in server, or "+defaultServer+")")
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print the server's answer as JSON, for scripts")
	root.PersistentFlags().StringVar(&a.configDir, "config-dir", defaultConfigDir(), "where credentials are kept (REFTRACK_CONFIG_DIR)")
	root.AddCommand(a.loginCmd(), a.logoutCmd(), a.programsCmd(), a.useCmd(), a.initCmd(), a.statusCmd(), a.testCmd(), a.keysCmd())
	return root
}

func (a *app) store() store { return store{dir: a.configDir} }

// serverURL is --server, else REFTRACK_BASE_URL, else the logged-in server, else localhost:8080.
func (a *app) serverURL(c credentials) string {
	for _, s := range []string{a.server, os.Getenv("REFTRACK_BASE_URL"), c.Server, defaultServer} {
		if s != "" {
			return strings.TrimRight(s, "/")
		}
	}
	return defaultServer
}

// api is the generated client for the server, sending token as Bearer when given.
func (a *app) api(server, token string) *client.ClientWithResponses {
	c, err := client.NewClientWithResponses(server, client.WithHTTPClient(a.httpClient),
		client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("User-Agent", "reftrack-cli/0.1.0 ("+runtime.GOOS+")")
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			return nil
		}))
	if err != nil {
		panic(err) // only an option can fail, and ours do not
	}
	return c
}

// printJSON writes v indented.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// --- errors -------------------------------------------------------------------------------------------------

type route int

const (
	accountRoute route = iota // account login token
	keyRoute                  // program API key
	loginRoute                // no credential
)

// answerError turns an error answer into what to tell the user, with the next step.
func answerError(status int, header http.Header, body []byte, r route) error {
	var env struct {
		Error struct {
			Message           string         `json:"message"`
			Code              string         `json:"code"`
			Hint              string         `json:"hint"`
			RetryAfterSeconds int            `json:"retry_after_seconds"`
			Details           map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	e := &userError{Message: env.Error.Message, RequestID: header.Get("X-Request-ID")}
	if id, ok := env.Error.Details["request_id"].(string); ok {
		e.RequestID = id
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("the server answered %d %s", status, http.StatusText(status))
	}
	switch {
	case env.Error.Code == "api_key_rotation_required":
		e.Next = env.Error.Hint + " Owners run `reftrack keys regenerate`."
	case status == http.StatusUnauthorized && r == keyRoute:
		e.Next = "the program's API key is not valid: a workspace owner runs `reftrack keys regenerate` (creating a new program does not help)."
	case status == http.StatusUnauthorized:
		e.Next = "run `reftrack login`."
	case env.Error.Code == "account_suspended" || env.Error.Details["code"] == "ACCOUNT_BLOCKED":
		e.Next = "your account is suspended; contact support (logging in again does not help)."
	case status == http.StatusForbidden:
		e.Next = "check the program: `reftrack programs` lists yours."
	case status == http.StatusTooManyRequests:
		e.Next = fmt.Sprintf("wait %d seconds and try again.", max(env.Error.RetryAfterSeconds, 1))
	case status >= 500:
		e.Next = "try again in a moment; if it keeps failing, send the request id to support."
	case status == http.StatusBadRequest && r == loginRoute:
		e.Next = "run `reftrack login` again."
	}
	return e
}

func networkError(server string, err error) error {
	return &userError{Message: "cannot reach " + server + ": " + err.Error(),
		Next: "check --server (or REFTRACK_BASE_URL), or start a local server with `make run`."}
}

// --- login / logout ------------------------------------------------------------------------------------------

func (a *app) loginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in through the browser",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.store().load()
			if err != nil {
				return err
			}
			server := a.serverURL(c)
			ctx := cmd.Context()
			api := a.api(server, "")
			start, err := api.CliAuthStartWithResponse(ctx, client.IgnoredRequest{})
			if err != nil {
				return networkError(server, err)
			}
			if start.JSON200 == nil {
				return answerError(start.StatusCode(), start.HTTPResponse.Header, start.Body, loginRoute)
			}
			s := start.JSON200.Data
			fmt.Fprintf(a.errOut, "Open this link to log in (valid 5 minutes):\n  %s\n", s.AuthUrl)
			if !a.noBrowser {
				if err := a.openBrowser(s.AuthUrl); err == nil {
					fmt.Fprintln(a.errOut, "Opened it in your browser.")
				}
			}
			spin := a.spinner("Waiting for you to log in in the browser")
			defer spin()
			state := s.State
			for {
				poll, err := api.CliAuthPollWithResponse(ctx, &client.CliAuthPollParams{State: &state})
				if err != nil {
					return networkError(server, err)
				}
				if poll.JSON200 == nil {
					return answerError(poll.StatusCode(), poll.HTTPResponse.Header, poll.Body, loginRoute)
				}
				d := poll.JSON200.Data
				switch d.Status {
				case client.CliAuthPollResponseDataStatusExpired:
					return &userError{Message: "the login link expired before you logged in", Next: "run `reftrack login` again."}
				case client.CliAuthPollResponseDataStatusComplete:
					spin()
					c = credentials{Server: server, Token: deref(d.Token), Email: deref(d.Email), Keys: c.Keys, Program: c.Program}
					if d.AdvertiserId != nil {
						c.AdvertiserID = *d.AdvertiserId
					}
					if d.ExpiresAt != nil {
						c.ExpiresAt = *d.ExpiresAt
					}
					if c.Server != server || c.Keys == nil {
						c.Keys = map[string]string{}
					}
					if err := a.store().save(c); err != nil {
						return err
					}
					if a.jsonOut {
						return a.printJSON(map[string]any{"email": c.Email, "advertiser_id": c.AdvertiserID, "server": server, "expires_at": c.ExpiresAt})
					}
					fmt.Fprintf(a.out, "Logged in as %s (advertiser %d) on %s.\nNext: `reftrack init` creates a program; `reftrack programs` lists yours.\n",
						c.Email, c.AdvertiserID, server)
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(a.pollInterval):
				}
			}
		},
	}
	cmd.Flags().BoolVar(&a.noBrowser, "no-browser", false, "print the link without opening a browser")
	return cmd
}

// spinner shows progress on a terminal; the returned function stops it (more calls do nothing).
func (a *app) spinner(label string) func() {
	if !a.interactive {
		fmt.Fprintln(a.errOut, label+"…")
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		for i := 0; ; i++ {
			fmt.Fprintf(a.errOut, "\r%s %s…", frames[i%len(frames)], label)
			select {
			case <-done:
				fmt.Fprint(a.errOut, "\r\033[K")
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	var once bool
	return func() {
		if !once {
			once = true
			close(done)
			<-stopped
		}
	}
}

func openBrowser(u string) error {
	if os.Getenv("REFTRACK_NO_BROWSER") != "" {
		return errors.New("disabled")
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	return cmd.Start()
}

func (a *app) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Revoke the login token on the server, then forget it and the stored API keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.store().load()
			if err != nil {
				return err
			}
			// Revoke first: a token only forgotten here would stay valid on the server until it expires.
			revoked, warning := false, ""
			if c.Token != "" {
				server := a.serverURL(c)
				res, err := a.api(server, c.Token).CliLogoutWithResponse(cmd.Context())
				switch {
				case err != nil:
					warning = "could not reach " + server + " to revoke the login token; it stays valid there until it expires."
				case res.JSON200 != nil:
					revoked = true
				case res.StatusCode() == http.StatusUnauthorized:
					revoked = true // already revoked or expired
				default:
					warning = fmt.Sprintf("the server answered %d when asked to revoke the login token; it may stay valid there until it expires.", res.StatusCode())
				}
			}
			if err := a.store().remove(); err != nil {
				return err
			}
			if warning != "" {
				fmt.Fprintln(a.errOut, "Warning: "+warning)
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"logged_out": true, "revoked": revoked})
			}
			if revoked {
				fmt.Fprintln(a.out, "Logged out: the login token is revoked on the server and forgotten here.")
				return nil
			}
			fmt.Fprintln(a.out, "Logged out.")
			return nil
		},
	}
}

// account loads the credentials and requires a login.
func (a *app) account() (credentials, string, error) {
	c, err := a.store().load()
	if err != nil {
		return c, "", err
	}
	if c.Token == "" {
		return c, "", &userError{Message: "you are not logged in", Next: "run `reftrack login`."}
	}
	return c, a.serverURL(c), nil
}

// --- programs / init ---------------------------------------------------------------------------------

func (a *app) programsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "programs",
		Short: "List your programs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, server, err := a.account()
			if err != nil {
				return err
			}
			res, err := a.api(server, c.Token).CliListProgramsWithResponse(cmd.Context())
			if err != nil {
				return networkError(server, err)
			}
			if res.JSON200 == nil {
				return answerError(res.StatusCode(), res.HTTPResponse.Header, res.Body, accountRoute)
			}
			if a.jsonOut {
				return a.printJSON(res.JSON200)
			}
			if len(res.JSON200.Data) == 0 {
				fmt.Fprintln(a.out, "No programs yet.\nNext: `reftrack init` creates one.")
				return nil
			}
			w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tDOMAIN\tSTATUS\tCOMMISSION\tPARTNERS\tCURRENT")
			for _, p := range res.JSON200.Data {
				cur := ""
				if strconv.FormatInt(p.Id, 10) == c.Program {
					cur = "*"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%s\n", p.Id, p.Name, p.Domain, p.Status, p.Commission, p.Partners, cur)
			}
			return w.Flush()
		},
	}
}

func (a *app) useCmd() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "use PROGRAM",
		Short: "Make a program current, and with --key store its API key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return &userError{Message: "a program is named by its id", Next: "`reftrack programs` lists them."}
			}
			c, server, err := a.account()
			if err != nil {
				return err
			}
			list, err := a.api(server, c.Token).CliListProgramsWithResponse(cmd.Context())
			if err != nil {
				return networkError(server, err)
			}
			if list.JSON200 == nil {
				return answerError(list.StatusCode(), list.HTTPResponse.Header, list.Body, accountRoute)
			}
			name := ""
			for _, p := range list.JSON200.Data {
				if p.Id == id {
					name = p.Name
				}
			}
			if name == "" {
				return &userError{Message: fmt.Sprintf("program %d is not one of your programs", id), Next: "`reftrack programs` lists them."}
			}
			if key != "" {
				// The key must be this program's: ask the server which program it opens.
				st, err := a.api(server, key).CliStatusWithResponse(cmd.Context(), &client.CliStatusParams{})
				if err != nil {
					return networkError(server, err)
				}
				if st.JSON200 == nil {
					return answerError(st.StatusCode(), st.HTTPResponse.Header, st.Body, keyRoute)
				}
				if st.JSON200.Data.ProgramId != id {
					return &userError{Message: fmt.Sprintf("that key is program %d's, not program %d's", st.JSON200.Data.ProgramId, id),
						Next: "pass the key shown when program " + args[0] + " was created."}
				}
			}
			pid := strconv.FormatInt(id, 10)
			c.Program = pid
			if key != "" {
				if c.Keys == nil {
					c.Keys = map[string]string{}
				}
				c.Keys[pid] = key
			}
			if err := a.store().save(c); err != nil {
				return err
			}
			_, stored := c.Keys[pid]
			if a.jsonOut {
				return a.printJSON(map[string]any{"program_id": id, "name": name, "key_stored": stored})
			}
			fmt.Fprintf(a.out, "Current program: %d (%s).\n", id, name)
			if stored {
				fmt.Fprintln(a.out, "Its API key is stored: `reftrack status` and `reftrack test` use it.")
			} else {
				fmt.Fprintf(a.out, "No API key stored for it: run `reftrack use %d --key KEY` with the key shown when it was created.\n", id)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the program's API key, checked with the server and stored")
	return cmd
}

func (a *app) initCmd() *cobra.Command {
	var name, domain, ctype, rate string
	var cookieDays, durationMonths int
	var advertiser int64
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a program (flags, or prompts on a terminal)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, server, err := a.account()
			if err != nil {
				return err
			}
			for _, f := range []struct {
				val    *string
				prompt string
				def    string
			}{
				{&name, "Program name", ""},
				{&domain, "Your site's domain (e.g. shop.example.com)", ""},
				{&ctype, "Commission type (percent, fixed, recurring_percent, recurring_fixed)", "percent"},
				{&rate, "Commission rate (percent, or amount in dollars for fixed types)", "20"},
			} {
				if *f.val == "" && a.interactive {
					if *f.val, err = a.ask(f.prompt, f.def); err != nil {
						return err
					}
				}
			}
			if name == "" || domain == "" || ctype == "" || rate == "" {
				return &userError{Message: "name, domain, commission type and rate are required",
					Next: "pass --name, --domain, --commission-type and --commission-rate (or run `reftrack init` in a terminal to be asked)."}
			}
			num, err := strconv.ParseFloat(rate, 64)
			if err != nil {
				return &userError{Message: "commission rate must be a number, got " + rate, Next: "for example --commission-rate 30."}
			}
			body := map[string]any{"name": name, "domain": domain, "commission_type": ctype, "commission_rate": json.Number(strconv.FormatFloat(num, 'f', -1, 64))}
			if cookieDays > 0 {
				body["cookie_duration"] = cookieDays
			}
			if durationMonths > 0 {
				body["duration_months"] = durationMonths
			}
			if advertiser > 0 {
				body["advertiser_id"] = advertiser
			}
			raw, _ := json.Marshal(body)
			res, err := a.api(server, c.Token).CliInitWithBodyWithResponse(cmd.Context(), "application/json", strings.NewReader(string(raw)))
			if err != nil {
				return networkError(server, err)
			}
			if res.JSON201 == nil {
				return answerError(res.StatusCode(), res.HTTPResponse.Header, res.Body, accountRoute)
			}
			d := res.JSON201.Data
			if c.Keys == nil {
				c.Keys = map[string]string{}
			}
			c.Keys[d.ProgramId], c.Program = d.ApiKey, d.ProgramId
			if err := a.store().save(c); err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(res.JSON201)
			}
			fmt.Fprintf(a.out, "Created program %s (%s) for %s.\nAPI key (shown once, kept in %s): %s\n\nAdd the tracker to every page of %s:\n  <script defer src=\"%s/js/svc.js\" data-svc-program-id=\"%s\"></script>\n\nNext: `reftrack test --chain` checks the whole chain; `reftrack status` shows the program.\n",
				d.ProgramId, d.ProgramSlug, d.Domain, a.store().path(), d.ApiKey, d.Domain, server, d.ProgramId)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "program name")
	f.StringVar(&domain, "domain", "", "your site's domain")
	f.StringVar(&ctype, "commission-type", "", "percent, fixed, recurring_percent or recurring_fixed")
	f.StringVar(&rate, "commission-rate", "", "percent (30) or amount in dollars (25) per the type")
	f.IntVar(&cookieDays, "cookie-days", 0, "days the referral cookie lasts (default 60)")
	f.IntVar(&durationMonths, "duration-months", 0, "recurring types: months a customer's payments keep paying (default lifetime)")
	f.Int64Var(&advertiser, "advertiser-id", 0, "the workspace to create it in (default yours)")
	return cmd
}

func (a *app) ask(prompt, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(a.errOut, "%s [%s]: ", prompt, def)
	} else {
		fmt.Fprintf(a.errOut, "%s: ", prompt)
	}
	line, err := a.in.ReadString('\n')
	if err != nil && line == "" {
		return "", &userError{Message: "no answer", Next: "pass the values as flags (see `reftrack init --help`)."}
	}
	if line = strings.TrimSpace(line); line == "" {
		return def, nil
	}
	return line, nil
}

// --- program-key commands ------------------------------------------------------------------------------

// programKey finds the API key to use: --api-key, REFTRACK_API_KEY, or the current program's stored key.
func (a *app) programKey(flagKey, flagProgram string) (credentials, string, string, string, error) {
	c, err := a.store().load()
	if err != nil {
		return c, "", "", "", err
	}
	server := a.serverURL(c)
	program := flagProgram
	if program == "" {
		program = c.Program
	}
	key := flagKey
	if key == "" {
		key = os.Getenv("REFTRACK_API_KEY")
	}
	if key == "" {
		key = c.Keys[program]
	}
	if key == "" {
		return c, server, program, "", &userError{Message: "no API key for a program",
			Next: "run `reftrack use ID --key KEY` with the program's key (`make run` and `reftrack init` print it), " +
				"`reftrack init` to create a program, or pass --api-key. (`reftrack keys regenerate` issues a new key, " +
				"and the old one stops working at once.)"}
	}
	return c, server, program, key, nil
}

func (a *app) statusCmd() *cobra.Command {
	var apiKey, program string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the program's status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, server, _, key, err := a.programKey(apiKey, program)
			if err != nil {
				return err
			}
			res, err := a.api(server, key).CliStatusWithResponse(cmd.Context(), &client.CliStatusParams{})
			if err != nil {
				return networkError(server, err)
			}
			if res.JSON200 == nil {
				return answerError(res.StatusCode(), res.HTTPResponse.Header, res.Body, keyRoute)
			}
			if a.jsonOut {
				return a.printJSON(res.JSON200)
			}
			d := res.JSON200.Data
			yes := map[bool]string{true: "yes", false: "no"}
			fmt.Fprintf(a.out, "Program %d: %s (%s)\n", d.ProgramId, d.Name, d.Domain)
			fmt.Fprintf(a.out, "  last 24h        %d clicks, %d leads, %d sales\n", d.RecentEvents.Clicks24h, d.RecentEvents.Leads24h, d.RecentEvents.Sales24h)
			fmt.Fprintf(a.out, "  partners        %d active\n  commissions     %d pending\n", d.ActivePartners, d.PendingCommissions)
			fmt.Fprintf(a.out, "  stripe          connected: %s, charges enabled: %s\n  dns verified    %s\n", yes[d.StripeConnected], yes[d.StripeChargesEnabled], yes[d.DnsVerified])
			if !d.DnsVerified {
				fmt.Fprintf(a.out, "                  add a DNS TXT record %s with the value %s\n", d.DnsRecord.Name, d.DnsRecord.Value)
			}
			if res.JSON200.Warnings != nil {
				for _, w := range *res.JSON200.Warnings {
					fmt.Fprintf(a.errOut, "Warning: %s (%s)\n", w.Message, w.Hint)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&apiKey, "api-key", "", "program API key (default REFTRACK_API_KEY or the current program's)")
	cmd.Flags().StringVar(&program, "program", "", "program id whose stored key to use (default the current program)")
	return cmd
}

func (a *app) testCmd() *cobra.Command {
	var apiKey, program string
	var chain bool
	cmd := &cobra.Command{
		Use:   "test [click|lead|sale]",
		Short: "Send a test event, or run a synthetic click → lead → sale chain with --chain",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, server, _, key, err := a.programKey(apiKey, program)
			if err != nil {
				return err
			}
			body := map[string]any{"type": "chain"}
			if !chain {
				if len(args) == 0 {
					return &userError{Message: "say which event to send", Next: "`reftrack test click`, `reftrack test lead`, `reftrack test sale` or `reftrack test --chain`."}
				}
				body = map[string]any{"event_type": args[0]}
			}
			raw, _ := json.Marshal(body)
			res, err := a.api(server, key).CliTestEventWithBodyWithResponse(cmd.Context(), "application/json", strings.NewReader(string(raw)))
			if err != nil {
				return networkError(server, err)
			}
			if res.JSON200 == nil {
				return answerError(res.StatusCode(), res.HTTPResponse.Header, res.Body, keyRoute)
			}
			if a.jsonOut {
				return a.printJSON(res.JSON200)
			}
			if chain {
				r, err := res.JSON200.Data.AsCliChainResult()
				if err != nil {
					return err
				}
				fmt.Fprintf(a.out, "Synthetic chain on link %s (customer %s)\n", r.ShortCode, r.CustomerKey)
				for _, step := range []struct {
					name string
					v    client.StepVerdict
				}{{"click", r.Verdict.Click}, {"lead", r.Verdict.Lead}, {"sale", r.Verdict.Sale}} {
					fmt.Fprintf(a.out, "  %-6s %s\n", step.name, step.v)
				}
				if r.Attributed {
					fmt.Fprintln(a.out, "Verdict: attributed. Every step reached the partner; tracking works end to end.")
					fmt.Fprintf(a.out, "See it in the dashboard: %s/dashboard (tick Test data).\n", server)
					return nil
				}
				return &userError{Message: "the chain was not attributed end to end", Next: "check the program's attribution window and referral links (`reftrack status`)."}
			}
			r, err := res.JSON200.Data.AsCliTestEventResult()
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "%s (id %d, attributed: %v)\n", r.Message, r.EventId, r.Attributed)
			fmt.Fprintf(a.out, "See it in the dashboard: %s/dashboard (tick Test data).\n", server)
			return nil
		},
	}
	cmd.Flags().BoolVar(&chain, "chain", false, "run the synthetic click → lead → sale chain (10 per program per hour)")
	cmd.Flags().StringVar(&apiKey, "api-key", "", "program API key (default REFTRACK_API_KEY or the current program's)")
	cmd.Flags().StringVar(&program, "program", "", "program id whose stored key to use (default the current program)")
	return cmd
}

// --- keys -----------------------------------------------------------------------------------------------------

func (a *app) keysCmd() *cobra.Command {
	var program string
	keys := &cobra.Command{
		Use:   "keys",
		Short: "Show the program's API key (masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, server, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := a.api(server, c.Token).GetApiKeyWithResponse(cmd.Context(), id)
			if err != nil {
				return networkError(server, err)
			}
			if res.JSON200 == nil {
				return answerError(res.StatusCode(), res.HTTPResponse.Header, res.Body, accountRoute)
			}
			if a.jsonOut {
				return a.printJSON(res.JSON200)
			}
			k := res.JSON200.Data
			fmt.Fprintf(a.out, "Program %d API key: %s (created %s)\n", id, k.Masked, k.CreatedAt.Format(time.RFC3339))
			if k.Rotation != nil {
				fmt.Fprintf(a.out, "Marked for rotation: regenerate it before %s (`reftrack keys regenerate`).\n", k.Rotation.RotateBy.Format(time.RFC3339))
			}
			return nil
		},
	}
	var yes bool
	regen := &cobra.Command{
		Use:   "regenerate",
		Short: "Issue a new API key (owners); the old one stops working at once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, server, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			if !yes {
				// The old key stops working at once, in every backend that uses it: ask first.
				if !a.interactive {
					return &userError{Message: fmt.Sprintf("regenerating program %d's API key stops the current key at once", id),
						Next: "run it again with --yes to confirm."}
				}
				answer, err := a.ask(fmt.Sprintf("Regenerate program %d's API key? The current key stops working at once, everywhere it is used. Type yes to confirm", id), "")
				if err != nil {
					return err
				}
				if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
					fmt.Fprintln(a.out, "Not regenerated: the current key still works.")
					return nil
				}
			}
			res, err := a.api(server, c.Token).RegenerateApiKeyWithResponse(cmd.Context(), id, client.IgnoredRequest{})
			if err != nil {
				return networkError(server, err)
			}
			if res.JSON200 == nil {
				return answerError(res.StatusCode(), res.HTTPResponse.Header, res.Body, accountRoute)
			}
			if c.Keys == nil {
				c.Keys = map[string]string{}
			}
			c.Keys[strconv.FormatInt(id, 10)] = res.JSON200.Data.ApiKey
			if err := a.store().save(c); err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(res.JSON200)
			}
			fmt.Fprintf(a.out, "New API key for program %d (shown once, kept in %s): %s\nThe old key no longer works: update your backend's REFTRACK_API_KEY.\n",
				id, a.store().path(), res.JSON200.Data.ApiKey)
			return nil
		},
	}
	regen.Flags().BoolVar(&yes, "yes", false, "confirm without asking (scripts)")
	keys.PersistentFlags().StringVar(&program, "program", "", "program id (default the current program)")
	keys.AddCommand(regen)
	return keys
}

// accountProgram requires a login and a program id (flag or current).
func (a *app) accountProgram(flagProgram string) (credentials, string, int64, error) {
	c, server, err := a.account()
	if err != nil {
		return c, "", 0, err
	}
	p := flagProgram
	if p == "" {
		p = c.Program
	}
	id, err := strconv.ParseInt(p, 10, 64)
	if err != nil || id < 1 {
		return c, "", 0, &userError{Message: "which program?", Next: "pass --program ID (`reftrack programs` lists them)."}
	}
	return c, server, id, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
