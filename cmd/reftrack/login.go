package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

// loginCmd is `reftrack login`: a login session the user completes in the browser while the CLI polls.
func (a *app) loginCmd() *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in through the browser",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := a.store().load()
			if err != nil {
				return err
			}
			server := a.serverURL(c)
			to := endpoint{server: server, kind: loginRoute}
			start, err := call[client.CliAuthStartResponse](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CliAuthStart(ctx, client.IgnoredRequest{})
			})
			if err != nil {
				return err
			}
			s := start.Data
			fmt.Fprintf(a.errOut, "Open this link to log in (valid 5 minutes):\n  %s\n", s.AuthUrl)
			if !noBrowser {
				if err := a.openBrowser(s.AuthUrl); err == nil {
					fmt.Fprintln(a.errOut, "Opened it in your browser.")
				}
			}
			spin := a.spinner("Waiting for you to log in in the browser")
			defer spin()
			state := s.State
			for {
				poll, err := call[client.CliAuthPollResponse](a, to, func(api *client.Client) (*http.Response, error) {
					return api.CliAuthPoll(ctx, &client.CliAuthPollParams{State: &state})
				})
				if err != nil {
					return err
				}
				d := poll.Data
				switch d.Status {
				case client.CliAuthPollResponseDataStatusExpired:
					return &userError{Message: "the login link expired before you logged in", Next: "run `reftrack login` again."}
				case client.CliAuthPollResponseDataStatusComplete:
					spin()
					return a.loggedIn(c, server, poll)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(a.pollInterval):
				}
			}
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the link without opening a browser")
	return cmd
}

// loggedIn stores the login token the poll answered (keeping the program keys of the same server) and
// says so.
func (a *app) loggedIn(old credentials, server string, poll *client.CliAuthPollResponse) error {
	d := poll.Data
	c := credentials{Server: server, Token: deref(d.Token), Email: deref(d.Email), Keys: old.Keys, Program: old.Program}
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

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
