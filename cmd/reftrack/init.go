package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/programs"
)

// newProgram is what `reftrack init` is given, by flags or prompts. The optional numbers are nil unless
// their flag was given: a value given is sent (and checked), never quietly dropped.
type newProgram struct {
	name, domain, ctype, rate  string
	cookieDays, durationMonths *int64
	advertiser                 *int64
	ledger                     ledgerSettings
}

// ledgerSettings are the program's ledger settings init was given. cli/init does not take them (its
// contract is the original product's), so init sets them with PATCH /api/v1/programs/{programId} once
// the program exists; nil fields were not given and keep the server's defaults.
type ledgerSettings struct {
	holdDays      *int64
	approval      *string
	payoutMinimum *int64
}

// given is whether any was.
func (l ledgerSettings) given() bool {
	return l.holdDays != nil || l.approval != nil || l.payoutMinimum != nil
}

// request is the PATCH's body, or the refusal the server would answer it with: pkg/programs' checks in
// the order programs.Apply makes them, in programs.Message's words.
func (l ledgerSettings) request() ([]byte, error) {
	body := map[string]any{}
	if l.approval != nil && strings.IndexByte(*l.approval, 0) >= 0 {
		return nil, refused(apierr.NULInField("commission_approval").Message)
	}
	if l.holdDays != nil {
		if err := programs.CheckHoldDays(*l.holdDays); err != nil {
			return nil, refusedSetting(err)
		}
		body["hold_days"] = *l.holdDays
	}
	if l.approval != nil {
		if err := programs.CheckApproval(*l.approval); err != nil {
			return nil, refusedSetting(err)
		}
		body["commission_approval"] = *l.approval
	}
	if l.payoutMinimum != nil {
		if err := programs.CheckPayoutMinimum(*l.payoutMinimum); err != nil {
			return nil, refusedSetting(err)
		}
		body["payout_minimum_cents"] = *l.payoutMinimum
	}
	return json.Marshal(body)
}

// initCmd is `reftrack init`: create a program in the account's workspace, keep its API key and make it
// current.
func (a *app) initCmd() *cobra.Command {
	var p newProgram
	var cookieDays, durationMonths int
	var advertiser, holdDays, payoutMinimum int64
	var approval string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a program (flags, or prompts on a terminal)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, to, err := a.account()
			if err != nil {
				return err
			}
			if err := a.askMissing(&p); err != nil {
				return err
			}
			flags := cmd.Flags()
			if flags.Changed("cookie-days") {
				p.cookieDays = ptr(int64(cookieDays))
			}
			if flags.Changed("duration-months") {
				p.durationMonths = ptr(int64(durationMonths))
			}
			if flags.Changed("advertiser-id") {
				p.advertiser = &advertiser
			}
			if flags.Changed("hold-days") {
				p.ledger.holdDays = &holdDays
			}
			if flags.Changed("commission-approval") {
				p.ledger.approval = &approval
			}
			if flags.Changed("payout-minimum") {
				p.ledger.payoutMinimum = &payoutMinimum
			}
			body, err := p.request()
			if err != nil {
				return err
			}
			// Both requests' values are checked before the first is sent.
			var settings []byte
			if p.ledger.given() {
				if settings, err = p.ledger.request(); err != nil {
					return err
				}
			}
			res, err := call[client.CliInitResponse](a, to, func(api *client.Client) (*http.Response, error) {
				return api.CliInitWithBody(cmd.Context(), "application/json", bytes.NewReader(body))
			})
			if err != nil {
				return err
			}
			d := res.Data
			c.keep(d.ProgramId, d.ApiKey)
			c.Program = d.ProgramId
			if err := a.store().save(c); err != nil {
				return err
			}
			var program *client.ProgramEnvelope
			var settingsErr error
			if settings != nil {
				program, settingsErr = a.setLedger(cmd, to, d.ProgramId, settings)
			}
			// The API key is shown once: told whatever became of the settings.
			if a.jsonOut {
				if err := a.printJSON(res); err != nil {
					return err
				}
				return settingsErr
			}
			fmt.Fprintf(a.out, "Created program %s (%s) for %s.\nAPI key (shown once, kept in %s): %s\n\nAdd the tracker to every page of %s:\n  <script defer src=\"%s/js/svc.js\" data-svc-program-id=\"%s\"></script>\n\n",
				d.ProgramId, d.ProgramSlug, d.Domain, a.store().path(), d.ApiKey, d.Domain, to.server, d.ProgramId)
			if settingsErr != nil {
				return settingsErr
			}
			if program != nil {
				fmt.Fprintf(a.out, "Ledger: commissions held %d days, approval %s, payout minimum %d (minor units, each currency).\n",
					program.Data.HoldDays, program.Data.CommissionApproval, program.Data.PayoutMinimumCents)
			}
			fmt.Fprintln(a.out, "Next: `reftrack test --chain` checks the whole chain; `reftrack status` shows the program.")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.name, "name", "", "program name")
	f.StringVar(&p.domain, "domain", "", "your site's domain")
	f.StringVar(&p.ctype, "commission-type", "", "percent, fixed, recurring_percent or recurring_fixed")
	f.StringVar(&p.rate, "commission-rate", "", "percent (30) or amount in dollars (25) per the type")
	f.IntVar(&cookieDays, "cookie-days", 0, "days the referral cookie lasts (default 60)")
	f.IntVar(&durationMonths, "duration-months", 0, "recurring types: months a customer's payments keep paying (default lifetime)")
	f.Int64Var(&advertiser, "advertiser-id", 0, "the workspace to create it in (default yours)")
	f.Int64Var(&holdDays, "hold-days", 0, fmt.Sprintf("days a commission is held after its sale before it is payable, %d to %d (default %d)",
		programs.MinHoldDays, programs.MaxHoldDays, programs.DefaultHoldDays))
	f.StringVar(&approval, "commission-approval", "", fmt.Sprintf("%s: approved once the hold has passed (default), or %s: a member approves each",
		programs.ApprovalAuto, programs.ApprovalManual))
	f.Int64Var(&payoutMinimum, "payout-minimum", 0, fmt.Sprintf("the smallest payout in each currency's minor units (cents), 0 to %d (default 0)",
		programs.MaxPayoutMinimum))
	cmd.Long = cmd.Short + ".\n\nThe ledger's settings (--hold-days, --commission-approval, --payout-minimum) are set on the new program\n" +
		"right after it is created (PATCH /api/v1/programs/ID); every value is checked before anything is sent."
	return cmd
}

// setLedger sets the new program's ledger settings. Refused or not answered, the program exists all the
// same: the error says so, and how to set them.
func (a *app) setLedger(cmd *cobra.Command, to endpoint, programID string, settings []byte) (*client.ProgramEnvelope, error) {
	id, err := parseProgramID(programID)
	if err != nil {
		return nil, fmt.Errorf("the server answered program id %q", programID)
	}
	res, err := call[client.ProgramEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
		return api.UpdateProgramWithBody(cmd.Context(), id, "application/json", bytes.NewReader(settings))
	})
	if err != nil {
		var u *userError
		if errors.As(err, &u) {
			u.Message = fmt.Sprintf("program %d was created, but its ledger settings were not set: %s", id, u.Message)
			u.Next = strings.TrimSpace(u.Next + fmt.Sprintf(" Its other settings and API key are as shown; set the ledger's with PATCH /api/v1/programs/%d %s "+
				"(running init again would create another program).", id, settings))
		}
		return nil, err
	}
	return res, nil
}

// askMissing asks for the values the flags did not give, on a terminal.
func (a *app) askMissing(p *newProgram) error {
	if !a.interactive {
		return nil
	}
	for _, f := range []struct {
		val    *string
		prompt string
		def    string
	}{
		{&p.name, "Program name", ""},
		{&p.domain, "Your site's domain (e.g. shop.example.com)", ""},
		{&p.ctype, "Commission type (percent, fixed, recurring_percent, recurring_fixed)", "percent"},
		{&p.rate, "Commission rate (percent, or amount in dollars for fixed types)", "20"},
	} {
		if *f.val == "" {
			var err error
			if *f.val, err = a.ask(f.prompt, f.def); err != nil {
				return err
			}
		}
	}
	return nil
}

// request is the body of POST /api/v1/cli/init, or the refusal the server would answer it with: every
// value the server refuses is refused here, before sending, by the server's own rules (pkg/programs) in
// the server's own words (programs.Message, apierr), checked in the order the server checks them.
func (p newProgram) request() ([]byte, error) {
	// Blank counts as missing, as on the server; the CLI says which flags to pass.
	if strings.TrimSpace(p.name) == "" || strings.TrimSpace(p.domain) == "" || p.ctype == "" || p.rate == "" {
		return nil, &userError{Message: "name, domain, commission type and rate are required",
			Next: "pass --name, --domain, --commission-type and --commission-rate (or run `reftrack init` in a terminal to be asked)."}
	}
	num, err := strconv.ParseFloat(p.rate, 64)
	if err != nil || math.IsInf(num, 0) || math.IsNaN(num) {
		return nil, &userError{Message: "commission rate must be a number, got " + p.rate, Next: "for example --commission-rate 30."}
	}
	rate := strconv.FormatFloat(num, 'f', -1, 64) // the literal sent, and checked
	body := map[string]any{"name": p.name, "domain": p.domain, "commission_type": p.ctype, "commission_rate": json.Number(rate)}
	// The server reads the body's text first, member by member in the order json.Marshal writes them.
	for _, m := range []struct{ field, value string }{{"commission_type", p.ctype}, {"domain", p.domain}, {"name", p.name}} {
		if strings.IndexByte(m.value, 0) >= 0 {
			return nil, refused(apierr.NULInField(m.field).Message)
		}
	}
	if !commission.Valid(p.ctype) {
		return nil, refusedSetting(&programs.CommissionTypeError{Type: p.ctype})
	}
	settings := programs.New{Domain: p.domain, CommissionType: p.ctype, CommissionRate: rate, DurationMonths: p.durationMonths}
	if p.cookieDays != nil {
		// cli/init's name for cookie_window_days, which its refusal names.
		if err := programs.CheckWindow("cookie_duration", *p.cookieDays); err != nil {
			return nil, refusedSetting(err)
		}
		body["cookie_duration"] = *p.cookieDays
	}
	if err := settings.Check(); err != nil {
		return nil, refusedSetting(err)
	}
	if p.durationMonths != nil {
		body["duration_months"] = *p.durationMonths
	}
	if p.advertiser != nil {
		// Whose workspaces the account has is the server's to say, for any value.
		body["advertiser_id"] = *p.advertiser
	}
	return json.Marshal(body)
}

// refusedSetting is a setting pkg/programs refuses, in the words the server answers it with.
func refusedSetting(err error) error {
	if msg, ok := programs.Message(err); ok {
		return refused(msg)
	}
	return err
}

func ptr[T any](v T) *T { return &v }
