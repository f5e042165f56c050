package main

import (
	"fmt"
	"net/http"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/sdk"
)

// invitationsCmd is `reftrack partners invitations`: the program's invitations (the bare command, and
// list), one mailed again with a new link (resend) or withdrawn (cancel).
func (a *app) invitationsCmd(program *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "invitations",
		Short: "List the program's invitations, newest first; resend or cancel one",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.listInvitations(cmd, *program) },
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the program's invitations, newest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.listInvitations(cmd, *program) },
	}
	cmd.AddCommand(list, a.invitationResendCmd(program), a.invitationCancelCmd(program))
	return cmd
}

// listInvitations prints the program's invitations, newest first.
func (a *app) listInvitations(cmd *cobra.Command, program string) error {
	_, to, id, err := a.accountProgram(program)
	if err != nil {
		return err
	}
	res, err := call[client.InvitationListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
		return api.ListInvitations(cmd.Context(), id)
	})
	if err != nil {
		return programNext(err)
	}
	if a.jsonOut {
		return a.printJSON(res)
	}
	if len(res.Data) == 0 {
		fmt.Fprintln(a.out, "No invitations. `reftrack partners invite EMAIL` invites a partner.")
		return nil
	}
	a.invitationTable(res.Data)
	return nil
}

// invitationTable prints invitations: SENT is how many times each was mailed, EXPIRES when its link
// stops working.
func (a *app) invitationTable(list []client.Invitation) {
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEMAIL\tNAME\tPARTNER\tSTATUS\tSENT\tEXPIRES")
	for _, v := range list {
		fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%s\t%d\t%s\n", v.Id, v.Email, v.Name, v.PartnerId, v.Status, v.SentCount, webhookTime(&v.ExpiresAt))
	}
	w.Flush()
}

// invitationResendCmd is `reftrack partners invitations resend ID`: a new link, valid 30 days from now;
// the previous link stops working.
func (a *app) invitationResendCmd(program *string) *cobra.Command {
	return &cobra.Command{
		Use:   "resend ID",
		Short: "Mail an invitation again with a new link, valid 30 days (the previous link stops working)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			inv, err := invitationID(args[0])
			if err != nil {
				return err
			}
			_, to, id, err := a.accountProgram(*program)
			if err != nil {
				return err
			}
			res, err := call[client.InvitationEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.ResendInvitation(cmd.Context(), id, inv)
			})
			if err != nil {
				return invitationNext(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			v := res.Data
			fmt.Fprintf(a.out, "Invitation %d is mailed again to %s (%d %s in all): the new link is valid until %s; the previous one no longer works.\n",
				v.Id, v.Email, v.SentCount, plural(v.SentCount, "time", "times"), webhookTime(&v.ExpiresAt))
			return nil
		},
	}
}

// invitationCancelCmd is `reftrack partners invitations cancel ID`: the link stops working and the
// partner is no longer invited (they may be invited again).
func (a *app) invitationCancelCmd(program *string) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel an invitation: its link stops working (the partner may be invited again)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			inv, err := invitationID(args[0])
			if err != nil {
				return err
			}
			_, to, id, err := a.accountProgram(*program)
			if err != nil {
				return err
			}
			res, err := call[client.InvitationEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CancelInvitation(cmd.Context(), id, inv)
			})
			if err != nil {
				return invitationNext(err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			v := res.Data
			fmt.Fprintf(a.out, "Invitation %d to %s is canceled: its link no longer works. `reftrack partners invite %s` invites them again.\n",
				v.Id, v.Email, v.Email)
			return nil
		},
	}
}

// invitationID reads an invitation id as the routes take it: a positive integer.
func invitationID(s string) (int64, error) {
	id, err := parseProgramID(s)
	if err != nil {
		return 0, &userError{Message: fmt.Sprintf("an invitation is named by its id, a positive integer, not %q", s),
			Next: "`reftrack partners invitations` lists them with their ids."}
	}
	return id, nil
}

// invitationNext gives an invitation action the server refused its next step.
func invitationNext(err error) error {
	return withNext(err, func(e *sdk.APIError) string {
		switch {
		case e == nil:
			return ""
		case e.Status == http.StatusNotFound:
			return "`reftrack partners invitations` lists the program's invitations with their ids (--program ID for another program's)."
		case e.Status == http.StatusConflict:
			return "`reftrack partners invitations` shows each invitation's status."
		}
		return ""
	})
}
