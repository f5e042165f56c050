package main

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

// useCmd is `reftrack use ID [--key KEY]`: make one of the account's programs current, and store its API
// key once the server confirms the key opens that program.
func (a *app) useCmd() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "use PROGRAM",
		Short: "Make a program current, and with --key store its API key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseProgramID(args[0])
			if err != nil {
				return &userError{Message: "a program is named by its id", Next: "`reftrack programs` lists them."}
			}
			c, to, err := a.account()
			if err != nil {
				return err
			}
			list, err := a.programs(cmd, to)
			if err != nil {
				return err
			}
			name := ""
			for _, p := range list.Data {
				if p.Id == id {
					name = p.Name
				}
			}
			if name == "" {
				return &userError{Message: fmt.Sprintf("program %d is not one of your programs", id), Next: "`reftrack programs` lists them."}
			}
			if key != "" {
				// The key must be this program's: ask the server which program it opens.
				st, err := call[client.CliStatusResponse](a, endpoint{server: to.server, token: key, kind: keyRoute},
					func(api *client.Client) (*http.Response, error) {
						return api.CliStatus(cmd.Context(), &client.CliStatusParams{})
					})
				if err != nil {
					return err
				}
				if st.Data.ProgramId != id {
					return &userError{Message: fmt.Sprintf("that key is program %d's, not program %d's", st.Data.ProgramId, id),
						Next: "pass the key shown when program " + args[0] + " was created."}
				}
			}
			pid := strconv.FormatInt(id, 10)
			c.Program = pid
			if key != "" {
				c.keep(pid, key)
			}
			if err := a.store().save(c); err != nil {
				return err
			}
			_, stored := c.Keys[pid]
			if a.jsonOut {
				return a.printJSON(map[string]any{"program_id": id, "name": name, "key_stored": stored})
			}
			fmt.Fprintf(a.out, "Current program: %d (%s).\n", id, name)
			if stored {
				fmt.Fprintln(a.out, "Its API key is stored: `reftrack status` and `reftrack test` use it.")
			} else {
				fmt.Fprintf(a.out, "No API key stored for it: run `reftrack use %d --key KEY` with the key shown when it was created.\n", id)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the program's API key, checked with the server and stored")
	return cmd
}
