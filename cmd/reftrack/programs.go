package main

import (
	"fmt"
	"net/http"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

// programsCmd is `reftrack programs`: the programs of the account's workspaces, the current one marked.
func (a *app) programsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "programs",
		Short: "List your programs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, to, err := a.account()
			if err != nil {
				return err
			}
			list, err := a.programs(cmd, to)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(list)
			}
			if len(list.Data) == 0 {
				fmt.Fprintln(a.out, "No programs yet.\nNext: `reftrack init` creates one.")
				return nil
			}
			w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tDOMAIN\tSTATUS\tCOMMISSION\tPARTNERS\tCURRENT")
			for _, p := range list.Data {
				cur := ""
				if strconv.FormatInt(p.Id, 10) == c.Program {
					cur = "*"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%s\n", p.Id, p.Name, p.Domain, p.Status, p.Commission, p.Partners, cur)
			}
			return w.Flush()
		},
	}
}

// programs lists the account's programs (programs and use).
func (a *app) programs(cmd *cobra.Command, to endpoint) (*client.CliProgramsResponse, error) {
	return call[client.CliProgramsResponse](a, to, func(api *client.Client) (*http.Response, error) {
		return api.CliListPrograms(cmd.Context())
	})
}
