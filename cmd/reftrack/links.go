package main

import (
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/sdk"
)

// linksCmd is `reftrack links`: the program's referral links (list), a new one for a partner (create),
// and each link's on/off switch (disable, enable).
func (a *app) linksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "links",
		Short: "Partners' referral links: list them, create one, disable or enable one",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.linksListCmd(), a.linksCreateCmd(), a.linksEnableCmd(false), a.linksEnableCmd(true))
	return cmd
}

// linksListCmd is `reftrack links list [--partner ID]`: the program's referral links, one partner's with
// --partner (the route lists them all; the filter is applied here).
func (a *app) linksListCmd() *cobra.Command {
	var program string
	var partner int64
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the program's referral links",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			byPartner := cmd.Flags().Changed("partner")
			if byPartner {
				if err := checkPartnerFlag(partner); err != nil {
					return err
				}
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.LinkListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.ListLinks(cmd.Context(), id)
			})
			if err != nil {
				return programNext(err)
			}
			if byPartner {
				kept := []client.Link{}
				for _, l := range res.Data {
					if l.PartnerId != nil && *l.PartnerId == partner {
						kept = append(kept, l)
					}
				}
				res.Data = kept
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			if len(res.Data) == 0 {
				fmt.Fprintln(a.out, "No referral links. `reftrack links create --partner ID` makes one.")
				return nil
			}
			w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSHORT LINK\tPARTNER\tSTATUS\tREFERRAL URL")
			for _, l := range res.Data {
				p := "-"
				if l.PartnerId != nil {
					p = fmt.Sprint(*l.PartnerId)
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", l.Id, l.ShortLink, p, linkStatus(l.Enabled), l.ReferralUrl)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "program id (default the current program)")
	cmd.Flags().Int64Var(&partner, "partner", 0, "only this partner's links (the partner's id)")
	return cmd
}

// linksCreateCmd is `reftrack links create --partner ID [--code SHORT]`: a new referral link for one of
// the program's partners.
func (a *app) linksCreateCmd() *cobra.Command {
	var program, code string
	var partner int64
	cmd := &cobra.Command{
		Use:   "create --partner ID [--code SHORT]",
		Short: "Create a referral link for a partner, and print its URL",
		Long: "Create a referral link for a partner, and print its URL.\n\n" +
			"--code is the link's aff value: 3 to 64 letters, digits, _ or -, unique across every program (default\n" +
			"a random one). The server checks it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPartnerFlag(partner); err != nil {
				return err
			}
			body := client.LinkCreate{PartnerId: partner}
			if cmd.Flags().Changed("code") {
				body.ShortLink = &code
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			res, err := call[client.LinkEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CreateLink(cmd.Context(), id, body)
			})
			if err != nil {
				return withNext(err, func(e *sdk.APIError) string {
					switch {
					case e == nil:
						return ""
					case e.Status == http.StatusNotFound:
						return "`reftrack programs` lists yours (--program ID for another one)."
					case e.Status == http.StatusConflict && strings.HasSuffix(e.Message, "is already taken"):
						return "pass another --code, or none for a random one."
					case e.Status == http.StatusBadRequest && strings.HasPrefix(e.Message, "partner_id "):
						return "`reftrack partners` lists the program's partners with their ids."
					}
					return ""
				})
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			l := res.Data
			fmt.Fprintf(a.out, "Created referral link %d (%s) for partner %d.\nReferral URL: %s\n", l.Id, l.ShortLink, partner, l.ReferralUrl)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&program, "program", "", "program id (default the current program)")
	f.Int64Var(&partner, "partner", 0, "the partner's id (required; `reftrack partners` lists them)")
	f.StringVar(&code, "code", "", "the link's aff value, 3 to 64 letters, digits, _ or - (default a random one)")
	_ = cmd.MarkFlagRequired("partner")
	return cmd
}

// linksEnableCmd is `reftrack links enable ID` (on) or `reftrack links disable ID`.
func (a *app) linksEnableCmd(on bool) *cobra.Command {
	use, short := "enable ID", "Enable a referral link again: its clicks are recorded"
	if !on {
		use, short = "disable ID", "Disable a referral link: its clicks answer 410 link_disabled and record nothing"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := linkID(args[0])
			if err != nil {
				return err
			}
			_, to, err := a.account()
			if err != nil {
				return err
			}
			res, err := call[client.LinkEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
				return api.UpdateLink(cmd.Context(), id, client.LinkUpdate{Enabled: on})
			})
			if err != nil {
				return withNext(err, func(e *sdk.APIError) string {
					if e != nil && e.Status == http.StatusNotFound {
						return "`reftrack links list` lists the program's links with their ids."
					}
					return ""
				})
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			l := res.Data
			if on {
				fmt.Fprintf(a.out, "Referral link %d (%s) is enabled: %s records clicks again.\n", l.Id, l.ShortLink, l.ReferralUrl)
			} else {
				fmt.Fprintf(a.out, "Referral link %d (%s) is disabled: its clicks answer 410 link_disabled and record nothing, until `reftrack links enable %d`.\n",
					l.Id, l.ShortLink, l.Id)
			}
			return nil
		},
	}
}

// checkPartnerFlag refuses a --partner that is not a partner id.
func checkPartnerFlag(partner int64) error {
	if partner < 1 {
		return &userError{Message: fmt.Sprintf("a partner is named by its id, a positive integer, not %d", partner),
			Next: "`reftrack partners` lists the program's partners with their ids."}
	}
	return nil
}

// linkStatus is a link's switch as the table shows it.
func linkStatus(enabled bool) string {
	if enabled {
		return "enabled"
	}
	return "disabled"
}

// linkID reads a referral link id as the routes take it: a positive integer.
func linkID(s string) (int64, error) {
	id, err := parseProgramID(s)
	if err != nil {
		return 0, &userError{Message: fmt.Sprintf("a referral link is named by its id, a positive integer, not %q", s),
			Next: "`reftrack links list` lists them with their ids."}
	}
	return id, nil
}
