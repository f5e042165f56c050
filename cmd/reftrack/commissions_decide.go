package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/sdk"
	"github.com/spf13/cobra"
)

// approveCmd is `reftrack commissions approve ID…`: one commission through its own route, several through
// the program's bulk route, all or none.
func (a *app) approveCmd() *cobra.Command {
	var key idempotencyKey
	var program string
	var releaseHold bool
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
						client.CommissionApprove{ReleaseHold: release(releaseHold)})
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
						client.CommissionBulkApprove{Ids: ids, ReleaseHold: release(releaseHold)})
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
	cmd.Flags().BoolVar(&releaseHold, "release-hold", false, "approve commissions still in their hold too, releasing it (audited)")
	key.register(cmd)
	cmd.Long += "\n\nOne ID is approved through its own route; several through the program's (--program, default the\n" +
		"current one), all or none: if one cannot be approved, none is. A repeated ID counts once. A commission\n" +
		"still in its hold is approved only with --release-hold, which releases the hold (the next payout pays it)."
	return cmd
}

// release is the body's release_hold: sent only when asked, so that the default is the server's.
func release(asked bool) *bool {
	if !asked {
		return nil
	}
	return &asked
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
