package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/sdk"
)

// commissionsCmd is `reftrack commissions`: the program's commissions, newest first, a page at a time or
// all of them; `commissions approve` and `commissions reject` act on them (commissions_decide.go).
func (a *app) commissionsCmd() *cobra.Command {
	var program, status, hold string
	var partner int64
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "commissions",
		Short: "List the program's commissions (approve or reject them with the subcommands)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params := &client.ListCommissionsParams{}
			flags := cmd.Flags()
			if flags.Changed("status") {
				if err := ledger.CheckStatus(status); err != nil {
					return refused(err.Error())
				}
				params.Status = ptr(client.CommissionStatus(status))
			}
			if flags.Changed("hold") {
				if err := ledger.CheckHold(hold); err != nil {
					return refused(err.Error())
				}
				params.Hold = ptr(client.ListCommissionsParamsHold(hold))
			}
			if flags.Changed("partner") {
				var err error
				if params.PartnerId, err = partnerFilter(partner); err != nil {
					return err
				}
			}
			if flags.Changed("limit") {
				if err := ledger.CheckPageSize(limit); err != nil {
					return refused(err.Error())
				}
				params.Limit = &limit
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			return listPages(a, all, "commissions", func(cursor *string) ([]client.Commission, client.ListMeta, error) {
				params.Cursor = cursor
				page, err := call[client.CommissionListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.ListCommissions(cmd.Context(), id, params)
				})
				if err != nil {
					return nil, client.ListMeta{}, err
				}
				return page.Data, page.Meta, nil
			}, a.commissionTable)
		},
	}
	f := cmd.Flags()
	f.StringVar(&program, "program", "", "program id (default the current program)")
	f.StringVar(&status, "status", "", "only commissions in this status now: "+strings.Join(ledger.Statuses, ", "))
	f.StringVar(&hold, "hold", "", "only commissions still in their hold ("+ledger.HoldRunning+") or whose hold has ended ("+
		ledger.HoldEnded+"); with --status pending, ended is what awaits approval")
	f.Int64Var(&partner, "partner", 0, "only this partner's commissions (the partner's id)")
	f.IntVar(&limit, "limit", 0, fmt.Sprintf("commissions per page, 1 to %d (default %d)", ledger.MaxPageSize, ledger.DefaultPageSize))
	f.BoolVar(&all, "all", false, "list every page, following the server's cursor")
	cmd.AddCommand(a.approveCmd(), a.rejectCmd())
	return cmd
}

// commissionTable prints commissions, amounts in major units; a test commission's status says so.
func (a *app) commissionTable(cs []client.Commission) {
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPARTNER\tTRANSACTION\tAMOUNT\tPAYABLE\tSTATUS\tAVAILABLE ON")
	for _, c := range cs {
		status := string(c.Status)
		if c.IsTest {
			status += " (test)"
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", c.Id, c.PartnerId, c.TransactionId, money(c.AmountCents, c.Currency),
			money(c.PayableCents, c.Currency), status, day(c.AvailableOn))
	}
	w.Flush()
}

// commissionIDs reads commission ids as the routes take them (positive integers), a repeated one once.
func commissionIDs(args []string) ([]int64, error) {
	ids := make([]int64, 0, len(args))
	for _, s := range args {
		id, err := parseProgramID(s)
		if err != nil {
			return nil, &userError{Message: fmt.Sprintf("a commission is named by its id, a positive integer, not %q", s),
				Next: "`reftrack commissions` lists them with their ids."}
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// commissionNext gives a commission action the server refused its next step (commissionStep).
func commissionNext(err error) error { return withNext(err, commissionStep) }

// commissionStep is the next step after a commission action the server refused: "" when explain's (or
// none) is the one.
func commissionStep(e *sdk.APIError) string {
	switch {
	case e == nil:
		return ""
	case e.Status == http.StatusNotFound:
		return "`reftrack commissions` lists the program's commissions (--program ID for another program's)."
	case e.Status == http.StatusConflict && strings.HasSuffix(e.Message, "or release it early"):
		return "approve it once its hold has ended, or now with --release-hold (the next payout run then pays it)."
	case e.Status == http.StatusConflict && strings.HasSuffix(e.Message, "is in a payout"):
		return "a commission in a payout changes only if the payout fails: `reftrack payouts failed PAYOUT_ID --reason TEXT` returns its commissions to approved (`reftrack payouts list` shows the payouts)."
	case e.Status == http.StatusConflict && e.Message != idempotency.ErrKeyReused.Error():
		return "`reftrack commissions` shows each commission's status."
	}
	return ""
}
