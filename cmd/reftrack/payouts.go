package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/sdk"
)

// payoutsCmd is `reftrack payouts`: pay out the approved commissions (create), see the payouts (list),
// export them to pay them (export), and record the payment's outcome (paid, failed).
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
				body.Currency = ptr(client.PayoutCreateCurrency(currency))
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
				return nil
			}
			fmt.Fprintf(a.out, "Made %d %s:\n", len(res.Data), plural(len(res.Data), "payout", "payouts"))
			a.payoutTable(res.Data)
			fmt.Fprintln(a.out, "Next: pay them (`reftrack payouts export --output payouts.csv` for the file), then record each with\n"+
				"`reftrack payouts paid ID --reference REF` (or `reftrack payouts failed ID --reason TEXT`).")
			return nil
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program id (default the current program)")
	cmd.Flags().StringVar(&currency, "currency", "", "only this currency's payouts: "+strings.Join(commission.Currencies, ", ")+" (default every currency)")
	key.register(cmd)
	return cmd
}

// payoutsListCmd is `reftrack payouts list [--status S] [--limit N] [--all]`: the program's payouts,
// newest first.
func (a *app) payoutsListCmd() *cobra.Command {
	var program string
	var status string
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

// payoutsPaidCmd is `reftrack payouts paid ID --reference REF`: the payout and its commissions are paid.
func (a *app) payoutsPaidCmd() *cobra.Command {
	var key idempotencyKey
	var reference string
	cmd := &cobra.Command{
		Use:   "paid ID --reference REF",
		Short: "Record that a payout was paid, under the payment's reference",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := payoutID(args[0])
			if err != nil {
				return err
			}
			// The server reads the body's text (NUL) before its rules (ledger.CheckReference).
			if strings.IndexByte(reference, 0) >= 0 {
				return refused(apierr.NULInField("external_reference").Message)
			}
			if err := ledger.CheckReference(reference); err != nil {
				return refused(err.Error())
			}
			body, err := json.Marshal(client.PayoutPaid{ExternalReference: reference})
			if err != nil {
				return err
			}
			return a.settlePayout(cmd, &key, id, "paid", func(api *client.Client) (*http.Response, error) {
				return api.MarkPayoutPaidWithBody(cmd.Context(), id, &client.MarkPayoutPaidParams{IdempotencyKey: key.header()},
					"application/json", bytes.NewReader(body))
			})
		},
	}
	cmd.Flags().StringVar(&reference, "reference", "", fmt.Sprintf("the payment's reference at the processor (a PayPal batch id, a transfer's reference), 1 to %d characters (required)", ledger.MaxReference))
	_ = cmd.MarkFlagRequired("reference")
	key.register(cmd)
	return cmd
}

// payoutsFailedCmd is `reftrack payouts failed ID --reason TEXT`: its commissions are approved again,
// for a later run, and the clawbacks it netted are owed again.
func (a *app) payoutsFailedCmd() *cobra.Command {
	var key idempotencyKey
	var reason string
	cmd := &cobra.Command{
		Use:   "failed ID --reason TEXT",
		Short: "Record that a payout's payment failed: its commissions return to approved",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := payoutID(args[0])
			if err != nil {
				return err
			}
			if strings.IndexByte(reason, 0) >= 0 {
				return refused(apierr.NULInField("reason").Message)
			}
			if err := ledger.CheckReason(reason); err != nil {
				return refused(err.Error())
			}
			body, err := json.Marshal(client.PayoutFailed{Reason: reason})
			if err != nil {
				return err
			}
			return a.settlePayout(cmd, &key, id, "failed", func(api *client.Client) (*http.Response, error) {
				return api.MarkPayoutFailedWithBody(cmd.Context(), id, &client.MarkPayoutFailedParams{IdempotencyKey: key.header()},
					"application/json", bytes.NewReader(body))
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", fmt.Sprintf("why the payment failed, 1 to %d characters (required)", ledger.MaxReason))
	_ = cmd.MarkFlagRequired("reason")
	key.register(cmd)
	return cmd
}

// settlePayout sends a payout's paid or failed and tells its answer.
func (a *app) settlePayout(cmd *cobra.Command, key *idempotencyKey, id int64, outcome string, send func(*client.Client) (*http.Response, error)) error {
	if err := key.resolve(cmd); err != nil {
		return err
	}
	_, to, err := a.account()
	if err != nil {
		return err
	}
	res, err := call[client.PayoutEnvelope](a, to, send)
	if err != nil {
		return key.explain(withNext(err, func(e *sdk.APIError) string {
			switch {
			case e == nil:
				return ""
			case e.Status == http.StatusNotFound:
				return "`reftrack payouts list` lists the program's payouts (--program ID for another program's)."
			case e.Status == http.StatusConflict && e.Message != idempotency.ErrKeyReused.Error():
				return "`reftrack payouts list` shows each payout's status."
			}
			return ""
		}))
	}
	if a.jsonOut {
		return a.printJSON(res)
	}
	p := res.Data
	n := fmt.Sprintf("%d %s", p.CommissionCount, plural(p.CommissionCount, "commission", "commissions"))
	switch outcome {
	case "paid":
		fmt.Fprintf(a.out, "Payout %d is paid: %s to %s, reference %s (%s paid).\n", p.Id, money(p.AmountCents, p.Currency),
			p.PartnerName, orDash(p.ExternalReference), n)
	default:
		fmt.Fprintf(a.out, "Payout %d failed: %s (%s approved again, for the next `reftrack payouts create`).\n", p.Id,
			orDash(p.FailureReason), n)
	}
	return nil
}

// payoutID reads a payout id as the routes take it: a positive integer.
func payoutID(s string) (int64, error) {
	id, err := parseProgramID(s)
	if err != nil {
		return 0, &userError{Message: fmt.Sprintf("a payout is named by its id, a positive integer, not %q", s),
			Next: "`reftrack payouts list` lists them with their ids."}
	}
	return id, nil
}
