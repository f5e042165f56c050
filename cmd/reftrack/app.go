package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

const defaultServer = "http://localhost:8080"

// app is the CLI with its inputs and outputs, so tests run its commands in process. Each command is a
// method in a file of its own; every request goes through call (call.go).
type app struct {
	in          *bufio.Reader
	out, errOut io.Writer
	interactive bool // stdin and stderr are terminals: prompts and the spinner

	configDir    string
	server       string
	jsonOut      bool
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

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:           "reftrack",
		Short:         "The reftrack command-line client: log in, create a program, check it, send test events, manage partners and their links, approve commissions and pay partners.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	root.PersistentFlags().StringVar(&a.server, "server", "", "reftrack server (default: REFTRACK_BASE_URL, the logged-in server, or "+defaultServer+")")
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print the server's answer as JSON, for scripts")
	root.PersistentFlags().StringVar(&a.configDir, "config-dir", defaultConfigDir(), "where credentials are kept (REFTRACK_CONFIG_DIR)")
	root.AddCommand(a.loginCmd(), a.logoutCmd(), a.programsCmd(), a.useCmd(), a.initCmd(), a.statusCmd(), a.testCmd(), a.keysCmd(),
		a.commissionsCmd(), a.customersCmd(), a.balancesCmd(), a.payoutsCmd(), a.webhooksCmd(), a.partnersCmd(), a.linksCmd())
	root.AddCommand(a.mcpCmd())
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

// printJSON writes v indented.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ask prompts on standard error and reads one line; an empty answer is def.
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

// account loads the credentials and requires a login: what the account routes need.
func (a *app) account() (credentials, endpoint, error) {
	c, err := a.store().load()
	if err != nil {
		return c, endpoint{}, err
	}
	if c.Token == "" {
		return c, endpoint{}, &userError{Message: "you are not logged in", Next: "run `reftrack login`."}
	}
	return c, endpoint{server: a.serverURL(c), token: c.Token, kind: accountRoute}, nil
}

// accountProgram requires a login and a program id (flag or current).
func (a *app) accountProgram(flagProgram string) (credentials, endpoint, int64, error) {
	c, to, err := a.account()
	if err != nil {
		return c, to, 0, err
	}
	p := flagProgram
	if p == "" {
		p = c.Program
	}
	id, err := parseProgramID(p)
	if err != nil {
		return c, to, 0, &userError{Message: "which program?", Next: "pass --program ID (`reftrack programs` lists them)."}
	}
	return c, to, id, nil
}

// programKey finds the API key the program-key routes need: --api-key, REFTRACK_API_KEY, or the stored
// key of the program (--program, else the current one).
func (a *app) programKey(flagKey, flagProgram string) (endpoint, error) {
	c, err := a.store().load()
	if err != nil {
		return endpoint{}, err
	}
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
		return endpoint{}, &userError{Message: "no API key for a program",
			Next: "run `reftrack use ID --key KEY` with the program's key (`make run` and `reftrack init` print it), " +
				"`reftrack init` to create a program, or pass --api-key. (`reftrack keys regenerate` issues a new key, " +
				"and the old one stops working at once.)"}
	}
	return endpoint{server: a.serverURL(c), token: key, kind: keyRoute}, nil
}

// parseProgramID reads a program id as the routes take it: a positive integer.
func parseProgramID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err == nil && id < 1 {
		err = fmt.Errorf("program id %d is not positive", id)
	}
	return id, err
}
