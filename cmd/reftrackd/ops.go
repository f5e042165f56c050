package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/audit"
)

// actorFlag adds --actor to an operator command: who is acting, for the audit log.
func actorFlag(cmd *cobra.Command, actor *string) {
	cmd.PersistentFlags().StringVar(actor, "actor", "", "who is acting, for the audit log (default $USER)")
}

// operator is who runs an operator command: --actor, else the OS user ($USER, $LOGNAME). An action
// nobody can be named for is refused rather than recorded anonymously.
func (e *env) operator(flag string) (audit.Actor, error) {
	for _, name := range []string{flag, e.getenv("USER"), e.getenv("LOGNAME")} {
		if name != "" {
			return audit.Operator(name), nil
		}
	}
	return audit.Actor{}, errors.New("--actor is required: say who is acting (USER is not set)")
}

// keysCmd holds the operator's API-key actions.
func (e *env) keysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Operator actions on program API keys"}
	var (
		programID int64
		rotateBy  string
		actor     string
	)
	actorFlag(cmd, &actor)
	mark := &cobra.Command{
		Use:   "mark-rotation --program ID --rotate-by RFC3339 [--actor NAME]",
		Short: "Mark a program's key for mandatory rotation (e.g. after exposure)",
		Long: `mark-rotation marks the program's active API key for mandatory rotation. Until --rotate-by the key keeps
working and its responses carry Deprecation, Sunset and Link headers and a warnings array; afterwards
every request with it answers 401 api_key_rotation_required. A workspace owner regenerates the key.
The action is recorded in the audit log (reftrackd audit).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			deadline, err := time.Parse(time.RFC3339, rotateBy)
			if err != nil {
				return fmt.Errorf("--rotate-by must be an RFC 3339 time such as 2026-12-01T00:00:00Z: %w", err)
			}
			by, err := e.operator(actor)
			if err != nil {
				return err
			}
			return e.withDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
				var k apikeys.Key
				err := audit.Do(ctx, d, func(tx *sqlx.Tx) (audit.Entry, error) {
					var err error
					if k, err = apikeys.MarkRotation(ctx, tx, programID, deadline); err != nil {
						return audit.Entry{}, err
					}
					return audit.Entry{Actor: by, Action: audit.ActionKeyMarkRotation, Target: audit.ProgramTarget(programID),
						Detail: map[string]any{"key": k.Masked(), "rotate_by": k.RotateBy.UTC().Format(time.RFC3339)}}, nil
				})
				if err != nil {
					return fmt.Errorf("program %d: %w", programID, err)
				}
				fmt.Fprintf(e.stdout, "key %s of program %d marked for rotation by %s\n", k.Masked(), programID, k.RotateBy.UTC().Format(time.RFC3339))
				return nil
			})
		},
	}
	mark.Flags().Int64Var(&programID, "program", 0, "program id")
	mark.Flags().StringVar(&rotateBy, "rotate-by", "", "deadline (RFC 3339)")
	_ = mark.MarkFlagRequired("program")
	_ = mark.MarkFlagRequired("rotate-by")
	cmd.AddCommand(mark)
	return cmd
}

// accountAction runs an operator action on the account with email and records it in the audit log, in
// one transaction: act (accounts.Suspend, an unsuspend alike) changes the account in tx.
func (e *env) accountAction(ctx context.Context, by audit.Actor, action, email string,
	act func(ctx context.Context, tx sqlx.ExecerContext, email string) error) error {
	return e.withDB(ctx, func(ctx context.Context, d *sqlx.DB) error {
		return audit.Do(ctx, d, func(tx *sqlx.Tx) (audit.Entry, error) {
			a, err := accounts.ByEmail(ctx, tx, email)
			if err != nil {
				return audit.Entry{}, err
			}
			if err := act(ctx, tx, email); err != nil {
				return audit.Entry{}, err
			}
			return audit.Entry{Actor: by, Action: action, Target: audit.AccountTarget(a.ID),
				Detail: map[string]any{"email": a.Email}}, nil
		})
	})
}

// accountsCmd holds the operator's account actions.
func (e *env) accountsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "accounts", Short: "Operator actions on accounts"}
	var email, actor string
	actorFlag(cmd, &actor)
	suspend := &cobra.Command{
		Use:   "suspend --email EMAIL [--actor NAME]",
		Short: "Suspend an account: its logins, tokens and programs are refused (recorded in the audit log)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			by, err := e.operator(actor)
			if err != nil {
				return err
			}
			if err := e.accountAction(cmd.Context(), by, audit.ActionAccountSuspend, email, accounts.Suspend); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "account %s suspended\n", email)
			return nil
		},
	}
	suspend.Flags().StringVar(&email, "email", "", "account email")
	_ = suspend.MarkFlagRequired("email")
	cmd.AddCommand(suspend)
	unsuspend := &cobra.Command{
		Use:   "unsuspend --email EMAIL [--actor NAME]",
		Short: "Lift an account's suspension: its logins, tokens and programs work again (recorded in the audit log)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			by, err := e.operator(actor)
			if err != nil {
				return err
			}
			if err := e.accountAction(cmd.Context(), by, audit.ActionAccountUnsuspend, email, accounts.Unsuspend); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "account %s unsuspended\n", email)
			return nil
		},
	}
	unsuspend.Flags().StringVar(&email, "email", "", "account email")
	_ = unsuspend.MarkFlagRequired("email")
	cmd.AddCommand(unsuspend)
	return cmd
}

// auditCmd lists the audit log.
func (e *env) auditCmd() *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "audit [--limit N] [--json]",
		Short: "List the audit log of operator actions, newest first",
		Long: `audit lists the recorded operator actions (account.suspend, account.unsuspend, api_key.mark_rotation,
api_key.regenerate), newest first: when, who (the operator, or the account's email for a workspace
owner's key regeneration), what and on which target, with a JSON detail.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 10000 {
				return errors.New("--limit must be between 1 and 10000")
			}
			return e.withDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
				records, err := audit.List(ctx, d, limit)
				if err != nil {
					return err
				}
				if asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(records)
				}
				w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "AT\tACTOR\tACTION\tTARGET\tDETAIL")
				for _, r := range records {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.At.UTC().Format(time.RFC3339), r.Actor, r.Action, r.Target, r.Detail)
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "how many records at most")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	return cmd
}
