package main

import (
	"bytes"
	"encoding/json"
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
