package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/enrollment"
	"github.com/reftrack/reftrack/sdk"
	"github.com/spf13/cobra"
)

// partnersApproveCmd is `reftrack partners approve ID`: a partner who applied is approved.
func (a *app) partnersApproveCmd(program *string) *cobra.Command {
	return &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a partner's application: their links work and their sales earn commissions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			partner, err := partnerID(args[0])
			if err != nil {
				return err
			}
			_, to, id, err := a.accountProgram(*program)
			if err != nil {
				return err
			}
			res, err := call[client.PartnerEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.ApprovePartner(cmd.Context(), id, partner)
			})
			if err != nil {
				return partnerNext(err)
			}
			return a.printPartner(res)
		},
	}
}

// partnersRejectCmd is `reftrack partners reject ID [--reason TEXT]` (an application), or with ban
// `reftrack partners ban ID [--reason TEXT] [--yes]` (an approved partner, for good: it asks first).
func (a *app) partnersRejectCmd(program *string, ban bool) *cobra.Command {
	var reason string
	var yes bool
	use, short := "reject ID", "Reject a partner's application"
	if ban {
		use, short = "ban ID", "Ban an approved partner for good: their links go off, their unpaid commissions are rejected"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			partner, err := partnerID(args[0])
			if err != nil {
				return err
			}
			body := client.PartnerStatusReason{}
			if cmd.Flags().Changed("reason") {
				if err := checkNUL("reason", reason); err != nil {
					return err
				}
				if err := enrollment.CheckReason(&reason); err != nil {
					return refused(err.Error())
				}
				body.Reason = &reason
			}
			_, to, id, err := a.accountProgram(*program)
			if err != nil {
				return err
			}
			if ban && !yes {
				if ok, err := a.confirmBan(partner); !ok || err != nil {
					return err
				}
			}
			res, err := call[client.PartnerEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				if ban {
					return api.BanPartner(cmd.Context(), id, partner, body)
				}
				return api.RejectPartner(cmd.Context(), id, partner, body)
			})
			if err != nil {
				return partnerNext(err)
			}
			return a.printPartner(res)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", fmt.Sprintf("why, 1 to %d characters (kept with the partner, shown in the list)", enrollment.MaxReason))
	if ban {
		cmd.Flags().BoolVar(&yes, "yes", false, "confirm without asking (scripts)")
	}
	return cmd
}

// confirmBan asks on a terminal; elsewhere it refuses, pointing at --yes.
func (a *app) confirmBan(id int64) (bool, error) {
	if !a.interactive {
		return false, &userError{Message: fmt.Sprintf("banning partner %d is for good: their links go off and their commissions not yet in a payout are rejected", id),
			Next: "run it again with --yes to confirm."}
	}
	answer, err := a.ask(fmt.Sprintf("Ban partner %d for good? Their links go off and their commissions not yet in a payout are rejected. Type yes to confirm", id), "")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(strings.ToLower(answer)) != "yes" {
		fmt.Fprintln(a.out, "Not banned.")
		return false, nil
	}
	return true, nil
}

// printPartner tells a partner's status after approve, reject or ban.
func (a *app) printPartner(res *client.PartnerEnvelope) error {
	if a.jsonOut {
		return a.printJSON(res)
	}
	p := res.Data
	fmt.Fprintf(a.out, "Partner %d (%s, %s) is %s", p.Id, p.Name, p.Email, p.Status)
	if p.StatusReason != nil {
		fmt.Fprintf(a.out, ": %s", *p.StatusReason)
	}
	fmt.Fprintln(a.out, ".")
	switch p.Status {
	case client.PartnerStatusApproved:
		fmt.Fprintf(a.out, "Their links work and their sales earn commissions: `reftrack links list --partner %d` shows them.\n", p.Id)
	case client.PartnerStatusBanned:
		fmt.Fprintln(a.out, "Their links in the program are off for good, and their commissions not yet in a payout are rejected.")
	}
	return nil
}

// partnerID reads a partner id as the routes take it: a positive integer.
func partnerID(s string) (int64, error) {
	id, err := parseProgramID(s)
	if err != nil {
		return 0, &userError{Message: fmt.Sprintf("a partner is named by its id, a positive integer, not %q", s),
			Next: "`reftrack partners` lists them with their ids."}
	}
	return id, nil
}

// partnerNext gives a partner action the server refused its next step.
func partnerNext(err error) error {
	return withNext(err, func(e *sdk.APIError) string {
		switch {
		case e == nil:
			return ""
		case e.Status == http.StatusNotFound:
			return "`reftrack partners` lists the program's partners with their ids (--program ID for another program's)."
		case e.Status == http.StatusConflict:
			return "`reftrack partners` shows each partner's status."
		}
		return ""
	})
}
