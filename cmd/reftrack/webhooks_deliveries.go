package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/webhooks"
	"github.com/reftrack/reftrack/sdk"
)

// The deliveries of an endpoint: its log (deliveries), one sent again (resend), what it missed sent again
// (recover), and a sample event (test).

// webhooksDeliveriesCmd is `reftrack webhooks deliveries ID [--status S] [--event-type T] [--limit N]
// [--all]`: the endpoint's delivery log, newest first.
func (a *app) webhooksDeliveriesCmd() *cobra.Command {
	var status, eventType string
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "deliveries ENDPOINT_ID",
		Short: "List an endpoint's deliveries (the last 30 days), newest first, with their attempts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := webhookEndpointID(args[0])
			if err != nil {
				return err
			}
			params := &client.ListWebhookDeliveriesParams{}
			flags := cmd.Flags()
			if flags.Changed("status") {
				if err := webhooks.CheckStatus(status); err != nil {
					return refused(err.Error())
				}
				params.Status = ptr(client.WebhookDeliveryStatus(status))
			}
			if flags.Changed("event-type") {
				if err := webhooks.CheckEventType(eventType); err != nil {
					return refused(err.Error())
				}
				params.EventType = ptr(client.WebhookEventType(eventType))
			}
			if flags.Changed("limit") {
				if err := webhooks.CheckPageSize(limit); err != nil {
					return refused(err.Error())
				}
				params.Limit = &limit
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			return listPages(a, all, "deliveries", func(cursor *string) ([]client.WebhookDelivery, client.ListMeta, error) {
				params.Cursor = cursor
				page, err := call[client.WebhookDeliveryListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.ListWebhookDeliveries(cmd.Context(), id, params)
				})
				if err != nil {
					return nil, client.ListMeta{}, endpointNext(err)
				}
				return page.Data, page.Meta, nil
			}, a.deliveryTable)
		},
	}
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "only deliveries in this status: "+strings.Join(webhooks.DeliveryStatuses, ", "))
	f.StringVar(&eventType, "event-type", "", "only deliveries of this event type: "+strings.Join(webhooks.EventTypes, ", "))
	f.IntVar(&limit, "limit", 0, fmt.Sprintf("deliveries per page, 1 to %d (default %d)", webhooks.MaxPageSize, webhooks.DefaultPageSize))
	f.BoolVar(&all, "all", false, "list every page, following the server's cursor")
	cmd.Long = cmd.Short + ".\n\nLAST RESPONSE is the last attempt's HTTP status, or why there was no answer. NEXT ATTEMPT is when a\n" +
		"pending delivery is tried next (now: at once). --json shows every attempt, with its time, duration and\n" +
		"the first 1 KiB of the answer's body."
	return cmd
}

// deliveryTable prints deliveries; a test event's type says so.
func (a *app) deliveryTable(ds []client.WebhookDelivery) {
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tWEBHOOK ID\tEVENT\tSTATUS\tATTEMPTS\tNEXT ATTEMPT\tLAST RESPONSE")
	for _, d := range ds {
		event := string(d.EventType)
		if d.IsTest {
			event += " (test)"
		}
		next := webhookTime(d.NextAttemptAt)
		if d.Status == client.WebhookDeliveryStatusPending && d.NextAttemptAt == nil {
			next = "now"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", d.Id, d.WebhookId, event, d.Status, len(d.Attempts), next, lastResponse(d.Attempts))
	}
	w.Flush()
}

// lastResponse is the last attempt's status code, or why it had no answer (its first 80 characters:
// --json has it all), or "-" before the first attempt.
func lastResponse(attempts []client.WebhookAttempt) string {
	if len(attempts) == 0 {
		return "-"
	}
	last := attempts[len(attempts)-1]
	switch {
	case last.ResponseStatus != nil:
		return strconv.Itoa(*last.ResponseStatus)
	case last.Error != nil && *last.Error != "":
		e := strings.Join(strings.Fields(*last.Error), " ")
		if utf8.RuneCountInString(e) > 80 {
			e = string([]rune(e)[:79]) + "…"
		}
		return e
	}
	return "-"
}

// webhooksResendCmd is `reftrack webhooks resend DELIVERY_ID`: the delivery is queued again, at once,
// with the same webhook-id.
func (a *app) webhooksResendCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "resend DELIVERY_ID",
		Short: "Send a delivery again, at once, with the same webhook-id (receivers deduplicate on it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseProgramID(args[0])
			if err != nil {
				return &userError{Message: fmt.Sprintf("a webhook delivery is named by its id, a positive integer, not %q", args[0]),
					Next: "`reftrack webhooks deliveries ENDPOINT_ID` lists an endpoint's deliveries with their ids."}
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			res, err := call[client.WebhookDeliveryEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.ResendWebhookDelivery(cmd.Context(), id)
			})
			if err != nil {
				return withNext(err, func(e *sdk.APIError) string {
					if e != nil && e.Status == http.StatusNotFound {
						return "`reftrack webhooks deliveries ENDPOINT_ID` lists an endpoint's deliveries (the last 30 days) with their ids."
					}
					return ""
				})
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			d := res.Data
			fmt.Fprintf(a.out, "Delivery %d (%s, %s) is queued again, at once, with the same webhook-id.\n"+
				"Next: `reftrack webhooks deliveries %d` shows its attempts.\n", d.Id, d.EventType, d.WebhookId, d.EndpointId)
			return nil
		},
	}
}

// webhooksRecoverCmd is `reftrack webhooks recover ID --since T`: every event since T that the endpoint
// did not get is queued again.
func (a *app) webhooksRecoverCmd() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "recover ENDPOINT_ID --since TIME|DURATION",
		Short: "Send an endpoint again every event since a time that it did not get (after an outage, or while disabled)",
		Long: "Send an endpoint again every event since a time that it did not get (after an outage, or while disabled).\n\n" +
			"--since is a time in RFC 3339 (2026-03-05T08:00:00Z, or with an offset: 2026-03-05T09:00:00+01:00), or\n" +
			"a duration back from now by this computer's clock: 90m, 2h, 7d (d is 24 hours). The events of the\n" +
			"endpoint's types since then (and since it was added; events are kept 30 days) whose delivery did not\n" +
			"succeed are queued again, at once. Test events are not recovered.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := webhookEndpointID(args[0])
			if err != nil {
				return err
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			res, err := call[client.WebhookRecoverEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.RecoverWebhookDeliveries(cmd.Context(), id, client.WebhookRecover{Since: from})
			})
			if err != nil {
				return endpointNext(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			n := res.Data.Queued
			if n == 0 {
				fmt.Fprintf(a.out, "Nothing to recover: endpoint %d got every event of its types since %s (test events are not recovered).\n",
					id, webhookTime(&from))
				return nil
			}
			fmt.Fprintf(a.out, "Queued %d %s to endpoint %d: the events since %s it did not get.\n"+
				"Next: `reftrack webhooks deliveries %d` shows them.\n", n, plural(int(n), "delivery", "deliveries"), id, webhookTime(&from), id)
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "RFC 3339 time (2026-03-05T08:00:00Z), or a duration back from now (2h, 90m, 7d) (required)")
	_ = cmd.MarkFlagRequired("since")
	return cmd
}

// parseSince reads --since: an RFC 3339 time, or a positive duration (Go's, or whole days with d) back
// from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	bad := &userError{Message: fmt.Sprintf("--since must be an RFC 3339 time or a duration back from now, not %q", s),
		Next: "pass a time like 2026-03-05T08:00:00Z, or a duration like 2h, 90m or 7d."}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 3650 {
			return time.Time{}, bad
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return time.Time{}, bad
		}
	}
	if d <= 0 {
		return time.Time{}, bad
	}
	return now.Add(-d).UTC().Truncate(time.Second), nil
}

// webhooksTestCmd is `reftrack webhooks test ID [--event-type T]`: a sample event to this endpoint alone.
func (a *app) webhooksTestCmd() *cobra.Command {
	eventType := webhooks.SaleCreated
	cmd := &cobra.Command{
		Use:   "test ENDPOINT_ID [--event-type T]",
		Short: "Send an endpoint a sample event (its data has is_test true), to try your receiver",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := webhookEndpointID(args[0])
			if err != nil {
				return err
			}
			if err := webhooks.CheckEventType(eventType); err != nil {
				return refused(err.Error())
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			res, err := call[client.WebhookDeliveryEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.TestWebhookEndpoint(cmd.Context(), id, client.WebhookTest{EventType: client.WebhookEventType(eventType)})
			})
			if err != nil {
				return endpointNext(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			d := res.Data
			fmt.Fprintf(a.out, "Queued a test %s to endpoint %d: delivery %d, webhook-id %s.\n"+
				"Next: `reftrack webhooks deliveries %d` shows what your receiver answered.\n", d.EventType, id, d.Id, d.WebhookId, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&eventType, "event-type", eventType, "the sample event's type: "+strings.Join(webhooks.EventTypes, ", "))
	return cmd
}
