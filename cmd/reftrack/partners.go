package main

import (
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/enrollment"
	"github.com/reftrack/reftrack/sdk"
)

// partnersCmd is `reftrack partners`: the program's partners (list, also the bare command), inviting them
// by email (invite; their invitations in partners_invitations.go), and deciding their enrollment
// (approve, reject, ban; partners_decide.go).
func (a *app) partnersCmd() *cobra.Command {
	var program string
	cmd := &cobra.Command{
		Use:   "partners",
		Short: "List the program's partners; invite, approve, reject or ban them",
		Long: "List the program's partners; invite, approve, reject or ban them.\n\n" +
			"A partner's status in the program: invited (an invitation is out) becomes approved when they accept it;\n" +
			"pending (they applied) becomes approved or rejected; approved becomes banned, for good.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.listPartners(cmd, program) },
	}
	cmd.PersistentFlags().StringVar(&program, "program", "", "program id (default the current program)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the program's partners with their status and their clicks, leads and sales",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.listPartners(cmd, program) },
	}
	cmd.AddCommand(list, a.partnersInviteCmd(&program), a.partnersApproveCmd(&program), a.partnersRejectCmd(&program, false),
		a.partnersRejectCmd(&program, true), a.invitationsCmd(&program))
	return cmd
}

// listPartners prints the program's partners, oldest first as the server answers them.
func (a *app) listPartners(cmd *cobra.Command, program string) error {
	_, to, id, err := a.accountProgram(program)
	if err != nil {
		return err
	}
	res, err := call[client.PartnerListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
		return api.ListPartners(cmd.Context(), id)
	})
	if err != nil {
		return programNext(err)
	}
	if a.jsonOut {
		return a.printJSON(res)
	}
	if len(res.Data) == 0 {
		fmt.Fprintln(a.out, "No partners. `reftrack partners invite EMAIL` invites one.")
		return nil
	}
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tEMAIL\tSTATUS\tCLICKS\tLEADS\tSALES\tREASON")
	for _, p := range res.Data {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", p.Id, p.Name, p.Email, p.Status, p.Stats.Clicks, p.Stats.Leads,
			p.Stats.Sales, orDash(p.StatusReason))
	}
	return w.Flush()
}

// partnersInviteCmd is `reftrack partners invite EMAIL… [--name NAME] [--message TEXT]`: one invitation,
// or several all together (all or none), each mailed with a link valid 30 days.
func (a *app) partnersInviteCmd(program *string) *cobra.Command {
	var name, message string
	cmd := &cobra.Command{
		Use:   "invite EMAIL...",
		Short: "Invite partners by email: each gets a link to join, valid 30 days",
		Long: "Invite partners by email: each gets a link to join, valid 30 days.\n\n" +
			fmt.Sprintf("Up to %d emails at once, all invited or none. --name is the partner's name (one email only; default\n", enrollment.MaxInvitations) +
			"the email's local part for a new partner); --message is a note quoted in each mail.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, emails []string) error {
			flags := cmd.Flags()
			if flags.Changed("name") && len(emails) > 1 {
				return &userError{Message: "--name names one partner: pass one email with it",
					Next: "invite the others in a run of their own; their names default to their emails' local parts."}
			}
			// The server reads the body's text (NUL) before its rules, in the body's order.
			var fields []string // name, value, …
			for i, e := range emails {
				if len(emails) == 1 {
					fields = append(fields, "email", e, "message", message, "name", name)
				} else {
					fields = append(fields, fmt.Sprintf("invitations[%d].email", i), e, fmt.Sprintf("invitations[%d].message", i), message)
				}
			}
			if err := checkNUL(fields...); err != nil {
				return err
			}
			if flags.Changed("name") && name == "" {
				return refused(fmt.Sprintf("name must be 1 to %d characters", enrollment.MaxName))
			}
			list := make([]enrollment.Invitee, len(emails))
			for i, e := range emails {
				list[i] = enrollment.Invitee{Email: e, Name: name, Message: message}
			}
			if err := enrollment.CheckInvitees(list, len(list) > 1); err != nil {
				return refused(err.Error())
			}
			// The checks above hold every email to the server's rule, which the client's email type accepts.
			body := client.InvitationCreate{}
			if len(emails) == 1 {
				body.Email = ptr(openapi_types.Email(emails[0]))
				if name != "" {
					body.Name = &name
				}
				if message != "" {
					body.Message = &message
				}
			} else {
				items := make([]client.InvitationInput, len(emails))
				for i, e := range emails {
					items[i] = client.InvitationInput{Email: openapi_types.Email(e)}
					if message != "" {
						items[i].Message = &message
					}
				}
				body.Invitations = &items
			}
			_, to, id, err := a.accountProgram(*program)
			if err != nil {
				return err
			}
			res, err := call[client.InvitationListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CreateInvitations(cmd.Context(), id, body)
			})
			if err != nil {
				return withNext(err, func(e *sdk.APIError) string {
					next := inviteStep(e)
					if len(emails) > 1 && e != nil && (e.Status == http.StatusBadRequest || e.Status == http.StatusConflict) {
						next = strings.TrimSpace("none was invited (all or nothing). " + upperFirst(next))
					}
					return next
				})
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			n := len(res.Data)
			fmt.Fprintf(a.out, "Invited %d %s to program %d; the %s on %s way:\n", n, plural(n, "partner", "partners"), id,
				plural(n, "mail is", "mails are"), plural(n, "its", "their"))
			a.invitationTable(res.Data)
			fmt.Fprintln(a.out, "Each link is valid 30 days. `reftrack partners invitations` shows who accepted; "+
				"`reftrack partners invitations resend ID` mails a new link.")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", fmt.Sprintf("the partner's name, 1 to %d characters (one email only)", enrollment.MaxName))
	f.StringVar(&message, "message", "", fmt.Sprintf("a note quoted in the mail, at most %d characters", enrollment.MaxMessage))
	return cmd
}

// inviteStep is the next step after an invitation the server refused: "" when explain's (or none) is
// the one.
func inviteStep(e *sdk.APIError) string {
	switch {
	case e == nil:
		return ""
	case e.Status == http.StatusNotFound:
		return "`reftrack programs` lists yours (--program ID for another one)."
	case e.Status == http.StatusConflict && strings.HasSuffix(e.Message, "already has an open invitation: resend it"):
		return "`reftrack partners invitations` lists the invitations with their ids; `reftrack partners invitations resend ID` mails a new link."
	case e.Status == http.StatusConflict && strings.HasSuffix(e.Message, "applied to this program: approve the application"):
		return "`reftrack partners approve ID` (`reftrack partners` lists them with their ids)."
	}
	return ""
}

// programNext gives a program's list the server refused its next step.
func programNext(err error) error {
	return withNext(err, func(e *sdk.APIError) string {
		if e != nil && e.Status == http.StatusNotFound {
			return "`reftrack programs` lists yours (--program ID for another one)."
		}
		return ""
	})
}

// checkNUL refuses the first of fields (name, value, name, value, … in the body's order) whose value holds
// a NUL character, in the server's words: it reads the body's text before any rule.
func checkNUL(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if strings.IndexByte(fields[i+1], 0) >= 0 {
			return refused(apierr.NULInField(fields[i]).Message)
		}
	}
	return nil
}
