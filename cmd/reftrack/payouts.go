package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/ledger"
)

// payoutsCmd is `reftrack payouts`: pay out the approved commissions (create), see the payouts (list),
// export them to pay them (export), and record the payment's outcome (paid, failed; payouts_settle.go).
func (a *app) payoutsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "payouts",
		Short: "Pay partners: create payouts, list and export them, mark them paid or failed",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.payoutsCreateCmd(), a.payoutsListCmd(), a.payoutsExportCmd(), a.payoutsPaidCmd(), a.payoutsFailedCmd())
	return cmd
}

// payoutsCreateCmd is `reftrack payouts create [--currency C]`: one payout per partner and currency whose
// approved total less what it owes reaches the program's payout minimum.
func (a *app) payoutsCreateCmd() *cobra.Command {
	var program string
	var key idempotencyKey
	var currency string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Pay out the approved commissions: one payout per partner and currency",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body := client.PayoutCreate{}
			if cmd.Flags().Changed("currency") {
				currency = strings.ToUpper(currency)
				if err := ledger.CheckCurrency(currency); err != nil {
					return refused(err.Error())
				}
				body.Currency = ptr(currency)
			}
			if err := key.resolve(cmd); err != nil {
				return err
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.PayoutBatchEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CreatePayouts(cmd.Context(), id, &client.CreatePayoutsParams{IdempotencyKey: key.header()}, body)
			})
			if err != nil {
				return key.explain(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			if len(res.Data) == 0 {
				fmt.Fprintln(a.out, "No payout due: no partner's approved commissions, less the clawbacks it owes, reach the program's payout minimum.\n"+
					"`reftrack balances` shows what each partner has.")
				a.carriedOver(res.CarriedOver)
				return nil
			}
			fmt.Fprintf(a.out, "Made %d %s:\n", len(res.Data), plural(len(res.Data), "payout", "payouts"))
			a.payoutTable(res.Data)
			a.carriedOver(res.CarriedOver)
			fmt.Fprintln(a.out, "Next: pay them (`reftrack payouts export --output payouts.csv` for the file), then record each with\n"+
				"`reftrack payouts paid ID --reference REF` (or `reftrack payouts failed ID --reason TEXT`).")
			return nil
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program id (default the current program)")
	cmd.Flags().StringVar(&currency, "currency", "", "only this currency's payouts, an ISO 4217 code such as USD (default every currency)")
	key.register(cmd)
	return cmd
}

// carriedOver says what a payout run carried over to a later run, and why.
func (a *app) carriedOver(cs []client.PayoutCarriedOver) {
	for _, c := range cs {
		why := "under the program's payout minimum"
		if c.Reason == client.ClawbacksOwed {
			why = "the clawbacks the partner owes take all of it"
		}
		fmt.Fprintf(a.out, "Carried over: partner %d, %s (%s).\n", c.PartnerId, money(c.AmountCents, c.Currency), why)
	}
}

// payoutsListCmd is `reftrack payouts list [--status S] [--partner ID] [--limit N] [--all]`: the program's payouts,
// newest first.
func (a *app) payoutsListCmd() *cobra.Command {
	var program string
	var status string
	var partner int64
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the program's payouts, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params := &client.ListPayoutsParams{}
			if cmd.Flags().Changed("status") {
				if err := ledger.CheckPayoutStatus(status); err != nil {
					return refused(err.Error())
				}
				params.Status = ptr(client.PayoutStatus(status))
			}
			if cmd.Flags().Changed("partner") {
				var err error
				if params.PartnerId, err = partnerFilter(partner); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("limit") {
				if err := ledger.CheckPageSize(limit); err != nil {
					return refused(err.Error())
				}
				params.Limit = &limit
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			return listPages(a, all, "payouts", func(cursor *string) ([]client.Payout, client.ListMeta, error) {
				params.Cursor = cursor
				page, err := call[client.PayoutListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.ListPayouts(cmd.Context(), id, params)
				})
				if err != nil {
					return nil, client.ListMeta{}, err
				}
				return page.Data, page.Meta, nil
			}, a.payoutTable)
		},
	}
	f := cmd.Flags()
	f.StringVar(&program, "program", "", "program id (default the current program)")
	f.StringVar(&status, "status", "", "only payouts in this status: "+strings.Join(ledger.PayoutStatuses, ", "))
	f.Int64Var(&partner, "partner", 0, "only this partner's payouts (the partner's id)")
	f.IntVar(&limit, "limit", 0, fmt.Sprintf("payouts per page, 1 to %d (default %d)", ledger.MaxPageSize, ledger.DefaultPageSize))
	f.BoolVar(&all, "all", false, "list every page, following the server's cursor")
	return cmd
}

// payoutTable prints payouts, amounts in major units; REFERENCE is a paid payout's reference or a failed
// one's reason.
func (a *app) payoutTable(ps []client.Payout) {
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPARTNER\tNAME\tAMOUNT\tCOMMISSIONS\tCLAWBACK NETTED\tSTATUS\tCREATED\tREFERENCE")
	for _, p := range ps {
		ref := p.ExternalReference
		if p.Status == client.PayoutStatus(ledger.PayoutFailed) {
			ref = p.FailureReason
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", p.Id, p.PartnerId, p.PartnerName, money(p.AmountCents, p.Currency),
			p.CommissionCount, money(p.ClawbackCents, p.Currency), p.Status, day(&p.CreatedAt), orDash(ref))
	}
	w.Flush()
}

// payoutsExportCmd is `reftrack payouts export [--status S] [--format paypal] [--output FILE]`: the
// payouts as the server's CSV file, byte for byte, on standard output or in FILE.
func (a *app) payoutsExportCmd() *cobra.Command {
	var program string
	var status, format, output string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export payouts as CSV (default columns, or PayPal Payouts' bulk file) to pay them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params := &client.ExportPayoutsParams{}
			if cmd.Flags().Changed("status") {
				if err := ledger.CheckPayoutStatus(status); err != nil {
					return refused(err.Error())
				}
				params.Status = ptr(client.PayoutStatus(status))
			}
			if err := ledger.CheckFormat(format); err != nil {
				return refused(err.Error())
			}
			if format != ledger.FormatDefault {
				params.Format = ptr(client.ExportPayoutsParamsFormat(format))
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			file, err := callBytes(a, to, func(api *client.Client) (*http.Response, error) {
				return api.ExportPayouts(cmd.Context(), id, params)
			})
			if err != nil {
				return err
			}
			if output == "" {
				_, err := a.out.Write(file)
				return err
			}
			// Partners' emails and amounts: readable by the user only, like the credentials.
			if err := os.WriteFile(output, file, 0o600); err != nil {
				return &userError{Message: "cannot write the export: " + err.Error(), Next: "pass another --output, or none for standard output."}
			}
			rows, err := csv.NewReader(bytes.NewReader(file)).ReadAll()
			if err != nil {
				return fmt.Errorf("reading the export back: %w", err)
			}
			n := len(rows)
			if format == ledger.FormatDefault && n > 0 {
				n-- // the header
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"output": output, "bytes": len(file), "payouts": n})
			}
			fmt.Fprintf(a.out, "Wrote %d %s to %s (%d bytes).\n", n, plural(n, "payout", "payouts"), output, len(file))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&program, "program", "", "program id (default the current program)")
	f.StringVar(&status, "status", "", "the payouts' status: "+strings.Join(ledger.PayoutStatuses, ", ")+" (default processing: the ones to pay)")
	f.StringVar(&format, "format", "", "paypal for PayPal Payouts' bulk file (no header); default the reftrack columns")
	f.StringVarP(&output, "output", "o", "", "write the file here (mode 0600) instead of standard output")
	return cmd
}
