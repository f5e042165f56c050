package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/sdk"
)

// logoutCmd is `reftrack logout`: revoke the login token on the server, then forget the credentials.
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
				revoked, warning = a.revoke(cmd, endpoint{server: a.serverURL(c), token: c.Token, kind: accountRoute})
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

// revoke asks the server to revoke the login token. Logging out goes on whatever it answers, so a
// failure is a warning, never an error.
func (a *app) revoke(cmd *cobra.Command, to endpoint) (revoked bool, warning string) {
	_, err := call[json.RawMessage](a, to, func(api *client.Client) (*http.Response, error) {
		return api.CliLogout(cmd.Context())
	})
	var apiErr *sdk.APIError
	switch {
	case err == nil:
		return true, ""
	case !errors.As(err, &apiErr):
		return false, "could not reach " + to.server + " to revoke the login token; it stays valid there until it expires."
	case apiErr.Status == http.StatusUnauthorized:
		return true, "" // already revoked or expired
	default:
		return false, fmt.Sprintf("the server answered %d when asked to revoke the login token; it may stay valid there until it expires.", apiErr.Status)
	}
}
