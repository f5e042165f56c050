package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
)

// keysCmd holds the operator's API-key actions.
func (e *env) keysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Operator actions on program API keys"}
	var (
		programID int64
		rotateBy  string
	)
	mark := &cobra.Command{
		Use:   "mark-rotation --program ID --rotate-by RFC3339",
		Short: "Mark a program's key for mandatory rotation (e.g. after exposure)",
		Long: `mark-rotation marks the program's active API key for mandatory rotation. Until --rotate-by the key keeps
working and its responses carry Deprecation, Sunset and Link headers and a warnings array; afterwards
every request with it answers 401 api_key_rotation_required. A workspace owner regenerates the key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			deadline, err := time.Parse(time.RFC3339, rotateBy)
			if err != nil {
				return fmt.Errorf("--rotate-by must be an RFC 3339 time such as 2026-12-01T00:00:00Z: %w", err)
			}
			return e.withDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
				k, err := apikeys.MarkRotation(ctx, d, programID, deadline)
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

// accountsCmd holds the operator's account actions.
func (e *env) accountsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "accounts", Short: "Operator actions on accounts"}
	var email string
	suspend := &cobra.Command{
		Use:   "suspend --email EMAIL",
		Short: "Suspend an account: its logins and tokens are refused",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
				if err := accounts.Suspend(ctx, d, email); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "account %s suspended\n", email)
				return nil
			})
		},
	}
	suspend.Flags().StringVar(&email, "email", "", "account email")
	_ = suspend.MarkFlagRequired("email")
	cmd.AddCommand(suspend)
	return cmd
}
