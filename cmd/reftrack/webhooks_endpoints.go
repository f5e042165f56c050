package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/sdk"
	"github.com/spf13/cobra"
)

// webhooksRemoveCmd is `reftrack webhooks remove ID [--yes]`: the endpoint and its delivery log are
// deleted, so it asks first (or takes --yes).
func (a *app) webhooksRemoveCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "remove ID",
		Aliases: []string{"delete"},
		Short:   "Remove an endpoint with its delivery log: nothing more is sent to it",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := webhookEndpointID(args[0])
			if err != nil {
				return err
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			if !yes {
				if ok, err := a.confirmRemove(id); !ok || err != nil {
					return err
				}
			}
			if _, err := callBytes(a, to, func(api *client.Client) (*http.Response, error) {
				return api.DeleteWebhookEndpoint(cmd.Context(), id)
			}); err != nil {
				return endpointNext(err)
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"id": id, "removed": true})
			}
			fmt.Fprintf(a.out, "Removed webhook endpoint %d and its delivery log.\n", id)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm without asking (scripts)")
	return cmd
}

// confirmRemove asks on a terminal; elsewhere it refuses, pointing at --yes (and at disable, which keeps
// the log).
func (a *app) confirmRemove(id int64) (bool, error) {
	if !a.interactive {
		return false, &userError{Message: fmt.Sprintf("removing webhook endpoint %d deletes its delivery log", id),
			Next: fmt.Sprintf("run it again with --yes to confirm, or `reftrack webhooks disable %d` to stop its deliveries and keep the log.", id)}
	}
	answer, err := a.ask(fmt.Sprintf("Remove webhook endpoint %d with its delivery log? Type yes to confirm", id), "")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
		fmt.Fprintln(a.out, "Not removed.")
		return false, nil
	}
	return true, nil
}

// webhooksRotateCmd is `reftrack webhooks rotate-secret ID`: a new signing secret, shown this once; the
// previous one signs too for a day.
func (a *app) webhooksRotateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rotate-secret ID",
		Short: "Give an endpoint a new signing secret (shown once); the previous one signs too for 24 hours",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := webhookEndpointID(args[0])
			if err != nil {
				return err
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			res, err := call[client.WebhookEndpointSecretEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.RotateWebhookSecret(cmd.Context(), id)
			})
			if err != nil {
				return endpointNext(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			e := res.Data
			fmt.Fprintf(a.out, "New signing secret for webhook endpoint %d.\n", e.Id)
			a.printSecret(e.Secret)
			fmt.Fprintf(a.out, "Until %s every delivery carries two signatures, with this secret and the previous\n"+
				"one: switch your receiver to this secret before then.\n", webhookTime(e.SecretRotatingUntil))
			return nil
		},
	}
}

// webhooksEnableCmd is `reftrack webhooks enable ID` (on) or `reftrack webhooks disable ID`.
func (a *app) webhooksEnableCmd(on bool) *cobra.Command {
	use, short := "enable ID", "Enable an endpoint again: new events are delivered to it"
	if !on {
		use, short = "disable ID", "Disable an endpoint: it receives nothing (its pending deliveries fail) until enabled"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := webhookEndpointID(args[0])
			if err != nil {
				return err
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			res, err := call[client.WebhookEndpointEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.UpdateWebhookEndpoint(cmd.Context(), id, client.WebhookEndpointUpdate{Enabled: &on})
			})
			if err != nil {
				return endpointNext(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			if on {
				fmt.Fprintf(a.out, "Webhook endpoint %d is enabled: new events are delivered to it. What it missed is not sent by itself:\n"+
					"`reftrack webhooks recover %d --since 24h` sends the last day's (events are kept 30 days).\n", id, id)
			} else {
				fmt.Fprintf(a.out, "Webhook endpoint %d is disabled: it receives nothing, and its pending deliveries failed. Its events are\n"+
					"kept 30 days: `reftrack webhooks enable %d`, then `reftrack webhooks recover %d --since …` sends what it missed.\n", id, id, id)
			}
			return nil
		},
	}
}

// webhookTime is an instant in UTC, RFC 3339, or "-" for none.
func webhookTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// webhookEndpointID reads an endpoint id as the routes take it: a positive integer.
func webhookEndpointID(s string) (int64, error) {
	id, err := parseProgramID(s)
	if err != nil {
		return 0, &userError{Message: fmt.Sprintf("a webhook endpoint is named by its id, a positive integer, not %q", s),
			Next: "`reftrack webhooks list` lists them with their ids."}
	}
	return id, nil
}

// endpointNext gives an endpoint action the server refused its next step.
func endpointNext(err error) error {
	return withNext(err, func(e *sdk.APIError) string {
		if e != nil && e.Status == http.StatusNotFound {
			return "`reftrack webhooks list` lists the program's endpoints with their ids (--program ID for another program's)."
		}
		return ""
	})
}
