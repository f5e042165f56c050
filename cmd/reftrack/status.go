package main

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

// statusCmd is `reftrack status`: the program of the API key, its last day and what is left to set up.
func (a *app) statusCmd() *cobra.Command {
	var apiKey, program string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the program's status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			to, err := a.programKey(apiKey, program)
			if err != nil {
				return err
			}
			res, err := call[client.CliStatusResponse](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CliStatus(cmd.Context(), &client.CliStatusParams{})
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			d := res.Data
			yes := map[bool]string{true: "yes", false: "no"}
			fmt.Fprintf(a.out, "Program %d: %s (%s)\n", d.ProgramId, d.Name, d.Domain)
			fmt.Fprintf(a.out, "  last 24h        %d clicks, %d leads, %d sales\n", d.RecentEvents.Clicks24h, d.RecentEvents.Leads24h, d.RecentEvents.Sales24h)
			fmt.Fprintf(a.out, "  partners        %d active\n  commissions     %d pending\n", d.ActivePartners, d.PendingCommissions)
			fmt.Fprintf(a.out, "  stripe          connected: %s, charges enabled: %s\n  dns verified    %s\n", yes[d.StripeConnected], yes[d.StripeChargesEnabled], yes[d.DnsVerified])
			if !d.DnsVerified {
				fmt.Fprintf(a.out, "                  add a DNS TXT record %s with the value %s\n", d.DnsRecord.Name, d.DnsRecord.Value)
			}
			if res.Warnings != nil {
				for _, w := range *res.Warnings {
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
