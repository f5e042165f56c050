package main

import (
	"fmt"
	"net/http"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/ledger"
)

// balancesCmd is `reftrack balances`: each partner's money per currency, by bucket (pending, approved, in
// a payout, paid) and the clawbacks it owes, in major units; a payout run pays the approved less the owed.
func (a *app) balancesCmd() *cobra.Command {
	var program string
	cmd := &cobra.Command{
		Use:   "balances",
		Short: "Show the partners' balances: pending, approved, in payout, paid, clawback owed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.BalanceListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.ListBalances(cmd.Context(), id)
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			if len(res.Data) == 0 {
				fmt.Fprintln(a.out, "No balances yet: no partner has a commission.")
				return nil
			}
			w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "PARTNER\tNAME\tCURRENCY\tPENDING\tAPPROVED\tIN PAYOUT\tPAID\tCLAWBACK OWED")
			for _, b := range res.Data {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.PartnerId, b.PartnerName, b.Currency,
					ledger.FormatAmount(b.PendingCents, b.Currency), ledger.FormatAmount(b.ApprovedCents, b.Currency),
					ledger.FormatAmount(b.InPayoutCents, b.Currency), ledger.FormatAmount(b.PaidCents, b.Currency),
					ledger.FormatAmount(b.ClawbackOwedCents, b.Currency))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program id (default the current program)")
	return cmd
}
