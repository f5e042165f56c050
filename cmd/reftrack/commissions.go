package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/sdk"
)

// commissionsCmd is `reftrack commissions`: the program's commissions, newest first, a page at a time or
// all of them; `commissions approve` and `commissions reject` act on them.
func (a *app) commissionsCmd() *cobra.Command {
	var program, status string
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
			if flags.Changed("partner") {
				if partner < 1 {
					return &userError{Message: fmt.Sprintf("a partner is named by its id, a positive integer, not %d", partner),
						Next: "`reftrack balances` lists the program's partners with their ids."}
				}
				params.PartnerId = &partner
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

// approveCmd is `reftrack commissions approve ID…`: one commission through its own route, several through
// the program's bulk route, all or none.
func (a *app) approveCmd() *cobra.Command {
	var key idempotencyKey
	var program string
	cmd := &cobra.Command{
		Use:   "approve ID...",
		Short: "Approve commissions: several are approved all together or not at all",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := commissionIDs(args)
			if err != nil {
				return err
			}
			if err := ledger.CheckBulkApprove(len(ids)); err != nil {
				return refused(err.Error())
			}
			if err := key.resolve(cmd); err != nil {
				return err
			}
			var approved []client.Commission
			var answer any
			if len(ids) == 1 {
				_, to, err := a.account()
				if err != nil {
					return err
				}
				res, err := call[client.CommissionEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.ApproveCommission(cmd.Context(), ids[0], &client.ApproveCommissionParams{IdempotencyKey: key.header()},
						client.IgnoredRequest{})
				})
				if err != nil {
					return key.explain(commissionNext(err))
				}
				approved, answer = []client.Commission{res.Data}, res
			} else {
				_, to, id, err := a.accountProgram(program)
				if err != nil {
					return err
				}
				res, err := call[client.CommissionBatchEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.ApproveCommissions(cmd.Context(), id, &client.ApproveCommissionsParams{IdempotencyKey: key.header()},
						client.CommissionBulkApprove{Ids: ids})
				})
				if err != nil {
					return key.explain(withNext(err, func(e *sdk.APIError) string {
						switch {
						case e != nil && e.Status == http.StatusNotFound:
							return fmt.Sprintf("one of the IDs is not a commission of program %d, so none was approved: `reftrack commissions` lists the program's.", id)
						case e != nil && e.Status == http.StatusConflict && e.Message != idempotency.ErrKeyReused.Error():
							return "none was approved (all or nothing). " + upperFirst(commissionStep(e))
						}
						return ""
					}))
				}
				approved, answer = res.Data, res
			}
			if a.jsonOut {
				return a.printJSON(answer)
			}
			fmt.Fprintf(a.out, "Approved %d %s.\n", len(approved), plural(len(approved), "commission", "commissions"))
			a.commissionTable(approved)
			return nil
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "several IDs: their program's id (default the current program)")
	key.register(cmd)
	cmd.Long += "\n\nOne ID is approved through its own route; several through the program's (--program, default the\n" +
		"current one), all or none: if one cannot be approved, none is. A repeated ID counts once."
	return cmd
}

// rejectCmd is `reftrack commissions reject ID… --reason TEXT`: each commission pays nothing, ever. Each is
// its own request, in the order given; the first refusal stops the rest.
func (a *app) rejectCmd() *cobra.Command {
	var key idempotencyKey
	var reason string
	cmd := &cobra.Command{
		Use:   "reject ID... --reason TEXT",
		Short: "Reject commissions with a reason: they pay nothing, ever",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := commissionIDs(args)
			if err != nil {
				return err
			}
			// The server reads the body's text (NUL) before its rules (ledger.CheckReason).
			if strings.IndexByte(reason, 0) >= 0 {
				return refused(apierr.NULInField("reason").Message)
			}
			if err := ledger.CheckReason(reason); err != nil {
				return refused(err.Error())
			}
			if err := key.resolve(cmd); err != nil {
				return err
			}
			keys, err := perRequest(key.value, ids)
			if err != nil {
				return err
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			body, err := json.Marshal(client.CommissionReject{Reason: reason})
			if err != nil {
				return err
			}
			var rejected []client.Commission
			for i, id := range ids {
				res, err := call[client.CommissionEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.RejectCommissionWithBody(cmd.Context(), id, &client.RejectCommissionParams{IdempotencyKey: &keys[i]},
						"application/json", bytes.NewReader(body))
				})
				if err != nil {
					err = key.explain(commissionNext(err))
					var u *userError
					if len(ids) > 1 && errors.As(err, &u) {
						u.Next = strings.TrimSpace(rejectedSoFar(rejected, ids[i+1:]) + " " + upperFirst(u.Next))
					}
					return err
				}
				rejected = append(rejected, res.Data)
				if a.jsonOut && len(ids) == 1 {
					return a.printJSON(res)
				}
			}
			if a.jsonOut {
				return a.printJSON(client.CommissionBatchEnvelope{Data: rejected})
			}
			fmt.Fprintf(a.out, "Rejected %d %s: %s\n", len(rejected), plural(len(rejected), "commission", "commissions"), reason)
			a.commissionTable(rejected)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", fmt.Sprintf("why they pay nothing, 1 to %d characters (required; in the audit log)", ledger.MaxReason))
	_ = cmd.MarkFlagRequired("reason")
	key.register(cmd)
	cmd.Long += "\n\nEach ID is its own request, in the order given; the first that cannot be rejected stops the rest.\n" +
		"With several IDs, each request's key is KEY:ID. --json prints the server's answer for one ID, and\n" +
		"{\"data\": [the commissions]} for several."
	return cmd
}

// perRequest is each commission's Idempotency-Key: the run's key for one, KEY:ID for several (each
// request is another, and the server refuses one key on two).
func perRequest(key string, ids []int64) ([]string, error) {
	if len(ids) == 1 {
		return []string{key}, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = fmt.Sprintf("%s:%d", key, id)
		if err := idempotency.CheckKey(keys[i]); err != nil {
			return nil, &userError{Message: err.Error(), Next: "pass a shorter --idempotency-key: with several IDs each request's key is KEY:ID."}
		}
	}
	return keys, nil
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
	case e.Status == http.StatusConflict && strings.HasSuffix(e.Message, "is in a payout"):
		return "a commission in a payout changes only if the payout fails: `reftrack payouts failed PAYOUT_ID --reason TEXT` returns its commissions to approved (`reftrack payouts list` shows the payouts)."
	case e.Status == http.StatusConflict && e.Message != idempotency.ErrKeyReused.Error():
		return "`reftrack commissions` shows each commission's status."
	}
	return ""
}

// upperFirst is s with its first letter upper case, to start a sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// rejectedSoFar says which commissions a reject of several did reject before one failed, and which it did
// not send.
func rejectedSoFar(rejected []client.Commission, rest []int64) string {
	done := make([]int64, len(rejected))
	for i, c := range rejected {
		done[i] = c.Id
	}
	s := "None was rejected"
	if len(done) > 0 {
		s = upperFirst(commissionsWere(done, "rejected"))
	}
	if len(rest) > 0 {
		s += "; " + commissionsWere(rest, "not sent")
	}
	return s + "."
}

// commissionsWere is "commission 1 was what" or "commissions 1 and 2 were what".
func commissionsWere(ids []int64, what string) string {
	if len(ids) == 1 {
		return "commission " + idList(ids) + " was " + what
	}
	return "commissions " + idList(ids) + " were " + what
}

// idList is ids as a list, "1, 2 and 3".
func idList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
