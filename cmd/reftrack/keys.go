package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

// keysCmd is `reftrack keys`: the program's API key, masked; `keys regenerate` issues a new one.
func (a *app) keysCmd() *cobra.Command {
	var program string
	keys := &cobra.Command{
		Use:   "keys",
		Short: "Show the program's API key (masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.ApiKeyEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.GetApiKey(cmd.Context(), id)
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			k := res.Data
			fmt.Fprintf(a.out, "Program %d API key: %s (created %s)\n", id, k.Masked, k.CreatedAt.Format(time.RFC3339))
			if k.Rotation != nil {
				fmt.Fprintf(a.out, "Marked for rotation: regenerate it before %s (`reftrack keys regenerate`).\n", k.Rotation.RotateBy.Format(time.RFC3339))
			}
			return nil
		},
	}
	keys.PersistentFlags().StringVar(&program, "program", "", "program id (default the current program)")
	keys.AddCommand(a.regenerateCmd(&program))
	return keys
}

// regenerateCmd is `reftrack keys regenerate`: a new API key (owners), stored for the next commands. The
// old key stops working at once, in every backend that uses it, so it asks first (or takes --yes).
func (a *app) regenerateCmd(program *string) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "regenerate",
		Short: "Issue a new API key (owners); the old one stops working at once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, to, id, err := a.accountProgram(*program)
			if err != nil {
				return err
			}
			if !yes {
				if ok, err := a.confirmRegenerate(id); !ok || err != nil {
					return err
				}
			}
			res, err := call[client.ApiKeyIssuedEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.RegenerateApiKey(cmd.Context(), id, client.IgnoredRequest{})
			})
			if err != nil {
				return err
			}
			c.keep(strconv.FormatInt(id, 10), res.Data.ApiKey)
			if err := a.store().save(c); err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			fmt.Fprintf(a.out, "New API key for program %d (shown once, kept in %s): %s\nThe old key no longer works: update your backend's REFTRACK_API_KEY.\n",
				id, a.store().path(), res.Data.ApiKey)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm without asking (scripts)")
	return cmd
}

// confirmRegenerate asks on a terminal; elsewhere it refuses, pointing at --yes. Declined, it says the
// current key still works.
func (a *app) confirmRegenerate(id int64) (bool, error) {
	if !a.interactive {
		return false, &userError{Message: fmt.Sprintf("regenerating program %d's API key stops the current key at once", id),
			Next: "run it again with --yes to confirm."}
	}
	answer, err := a.ask(fmt.Sprintf("Regenerate program %d's API key? The current key stops working at once, everywhere it is used. Type yes to confirm", id), "")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
		fmt.Fprintln(a.out, "Not regenerated: the current key still works.")
		return false, nil
	}
	return true, nil
}
