package main

import (
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/webhooks"
	"github.com/reftrack/reftrack/sdk"
)

// webhooksCmd is `reftrack webhooks`: the program's outbound webhook endpoints (add, list; remove,
// rotate-secret, enable, disable in webhooks_endpoints.go) and their deliveries (deliveries, resend,
// recover, test; webhooks_deliveries.go).
func (a *app) webhooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Send the program's events to your URLs: add endpoints, see their deliveries, resend and recover them",
		Long: "Send the program's events to your URLs: add endpoints, see their deliveries, resend and recover them.\n\n" +
			"Each delivery is signed by the Standard Webhooks specification with the endpoint's secret (shown once,\n" +
			"by `add` and `rotate-secret`); verify it with any Standard Webhooks library, or sdk.VerifyWebhook in the\n" +
			"Go SDK. Event types: " + strings.Join(webhooks.EventTypes, ", ") + ".",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.webhooksAddCmd(), a.webhooksListCmd(), a.webhooksRemoveCmd(), a.webhooksRotateCmd(),
		a.webhooksEnableCmd(true), a.webhooksEnableCmd(false),
		a.webhooksDeliveriesCmd(), a.webhooksResendCmd(), a.webhooksRecoverCmd(), a.webhooksTestCmd())
	return cmd
}

// webhooksAddCmd is `reftrack webhooks add URL [--events T,…] [--description TEXT]`: a new endpoint, and
// its signing secret, shown this once.
func (a *app) webhooksAddCmd() *cobra.Command {
	var program, description string
	var events []string
	cmd := &cobra.Command{
		Use:   "add URL",
		Short: "Add an endpoint: a URL that receives the program's events, signed with a secret shown once",
		Long: "Add an endpoint: a URL that receives the program's events, signed with a secret shown once.\n\n" +
			"A production server takes only https:// URLs whose host names resolve to public addresses; a\n" +
			"development server (`make run`) takes http:// and loopback too. At most 10 endpoints per program.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := client.WebhookEndpointCreate{Url: args[0]}
			if err := checkWebhookURL(body.Url); err != nil {
				return err
			}
			if cmd.Flags().Changed("events") {
				types, err := webhookEventTypes(events)
				if err != nil {
					return err
				}
				if len(types) > 0 { // none (--events ""): every type, as when left out
					body.Events = &types
				}
			}
			if cmd.Flags().Changed("description") {
				if strings.IndexByte(description, 0) >= 0 {
					return refused(apierr.NULInField("description").Message)
				}
				if utf8.RuneCountInString(description) > webhooks.MaxDescription {
					return refused(fmt.Sprintf("description must be at most %d characters", webhooks.MaxDescription))
				}
				body.Description = &description
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.WebhookEndpointSecretEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CreateWebhookEndpoint(cmd.Context(), id, body)
			})
			if err != nil {
				return withNext(err, func(e *sdk.APIError) string {
					switch {
					case e == nil:
						return ""
					case e.Status == http.StatusNotFound:
						return "`reftrack programs` lists yours (--program ID for another one)."
					case e.Message == egress.ErrNotPublic.Error():
						return "a production server takes https:// URLs whose host names resolve to public addresses (http:// and loopback only in development)."
					case e.Message == fmt.Sprintf("a program has at most %d webhook endpoints", webhooks.MaxEndpoints):
						return "remove one first: `reftrack webhooks list`, then `reftrack webhooks remove ID`."
					}
					return ""
				})
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			e := res.Data
			fmt.Fprintf(a.out, "Added webhook endpoint %d to program %d: %s (%s).\n", e.Id, e.ProgramId, e.Url, webhookEvents(e.Events))
			a.printSecret(e.Secret)
			fmt.Fprintf(a.out, "Lost it? `reftrack webhooks rotate-secret %d` issues a new one.\n", e.Id)
			fmt.Fprintf(a.out, "Next: `reftrack webhooks test %d` sends it a sample event; `reftrack webhooks deliveries %d` shows what it answered.\n", e.Id, e.Id)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&program, "program", "", "program id (default the current program)")
	f.StringSliceVar(&events, "events", nil, "the event types it takes, comma-separated or repeated (default every type): "+strings.Join(webhooks.EventTypes, ", "))
	f.StringVar(&description, "description", "", fmt.Sprintf("what it is for, at most %d characters", webhooks.MaxDescription))
	return cmd
}

// printSecret shows an endpoint's signing secret, this once, and how to verify deliveries with it.
func (a *app) printSecret(secret string) {
	fmt.Fprintf(a.out, "Signing secret (shown only now; it cannot be shown again): %s\n", secret)
	fmt.Fprintln(a.out, "Keep it with your receiver: deliveries are signed by the Standard Webhooks specification (headers\n"+
		"webhook-id, webhook-timestamp, webhook-signature). Verify each with any Standard Webhooks library, or in Go\n"+
		"with the SDK's sdk.VerifyWebhook(secret, r.Header, body), and deduplicate on webhook-id.")
}

// webhooksListCmd is `reftrack webhooks list`: the program's endpoints, oldest first.
func (a *app) webhooksListCmd() *cobra.Command {
	var program string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the program's webhook endpoints",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.WebhookEndpointListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.ListWebhookEndpoints(cmd.Context(), id)
			})
			if err != nil {
				return withNext(err, func(e *sdk.APIError) string {
					if e != nil && e.Status == http.StatusNotFound {
						return "`reftrack programs` lists yours (--program ID for another one)."
					}
					return ""
				})
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			if len(res.Data) == 0 {
				fmt.Fprintln(a.out, "No webhook endpoints. `reftrack webhooks add URL` adds one.")
				return nil
			}
			w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tURL\tSTATUS\tEVENTS\tDESCRIPTION")
			for _, e := range res.Data {
				status := "enabled"
				if !e.Enabled {
					status = "disabled"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", e.Id, e.Url, status, webhookEvents(e.Events), orDash(e.Description))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, e := range res.Data {
				if !e.Enabled {
					fmt.Fprintf(a.out, "Endpoint %d is disabled (%s): `reftrack webhooks enable %d`, then `reftrack webhooks recover %d --since …` sends what it missed.\n",
						e.Id, orDash(e.DisabledReason), e.Id, e.Id)
				}
				if e.SecretRotatingUntil != nil && e.SecretRotatingUntil.After(time.Now()) {
					fmt.Fprintf(a.out, "Endpoint %d's deliveries are signed with its previous secret too until %s.\n", e.Id, webhookTime(e.SecretRotatingUntil))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program id (default the current program)")
	return cmd
}

// checkWebhookURL refuses a URL the server would refuse for its length (its address is the server's to
// judge: it depends on the server's mode and on DNS).
func checkWebhookURL(u string) error {
	switch {
	case u == "":
		return refused("url is required")
	case strings.IndexByte(u, 0) >= 0:
		return refused(apierr.NULInField("url").Message)
	case utf8.RuneCountInString(u) > webhooks.MaxURL:
		return refused(fmt.Sprintf("url must be at most %d characters", webhooks.MaxURL))
	}
	return nil
}

// webhookEventTypes reads --events: each an event type.
func webhookEventTypes(events []string) ([]client.WebhookEventType, error) {
	out := make([]client.WebhookEventType, 0, len(events))
	for _, t := range events {
		t = strings.TrimSpace(t)
		if err := webhooks.CheckEventType(t); err != nil {
			return nil, refused(err.Error())
		}
		out = append(out, client.WebhookEventType(t))
	}
	return out, nil
}

// webhookEvents is an endpoint's event types as a person reads them.
func webhookEvents(types *[]client.WebhookEventType) string {
	if types == nil || len(*types) == 0 {
		return "every event"
	}
	s := make([]string, len(*types))
	for i, t := range *types {
		s[i] = string(t)
	}
	return strings.Join(s, ",")
}
