package enrollment

import (
	"bytes"
	"context"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/jmoiron/sqlx"

	outbox "github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/programs"
)

// PortalPath is the partner portal, where a partner signs in with their email.
const PortalPath = "/partners"

// Add adds a partner to the program, approved at once (programs.InsertPartner: one already in the program
// keeps their enrollment). With portalMail, an approved partner is also mailed the portal's address and
// the program's terms, in the same transaction (the outbox): a partner the brand adds can sign in for
// their links, stats and payouts without an invitation. mailed tells whether that mail was written: not
// for a partner whose enrollment is not approved (invited, applied, rejected or banned).
func (v *Invitations) Add(ctx context.Context, programID int64, n programs.NewPartner, portalMail bool, now time.Time) (p programs.Partner, mailed bool, err error) {
	tx, err := v.DB.BeginTxx(ctx, nil)
	if err != nil {
		return programs.Partner{}, false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	p, err = programs.InsertPartner(ctx, tx, programID, n)
	if err != nil {
		return programs.Partner{}, false, err
	}
	if portalMail && p.Status == programs.StatusApproved {
		prog, err := programs.Get(ctx, tx, programID)
		if err != nil {
			return programs.Partner{}, false, err
		}
		if err := v.addedMail(ctx, tx, prog, p, now); err != nil {
			return programs.Partner{}, false, err
		}
		mailed = true
	}
	return p, mailed, tx.Commit()
}

type addedMailData struct {
	Name, Program, Domain, Terms, Email, Link string
}

var (
	addedText = texttemplate.Must(texttemplate.New("text").Parse(`Hello {{.Name}},

{{.Program}} ({{.Domain}}) added you to its partner program: share your referral link and earn a
commission on the sales you bring.

The terms: {{.Terms}}

Sign in to the partner portal with this address ({{.Email}}) for your referral links, your stats and
your payouts:
{{.Link}}

If you did not expect this mail, you can ignore it.
`))
	addedHTML = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>Hello {{.Name}},</p>
<p><strong>{{.Program}}</strong> ({{.Domain}}) added you to its partner program: share your referral link and earn a commission on the sales you bring.</p>
<p>The terms: {{.Terms}}</p>
<p><a href="{{.Link}}">Sign in to the partner portal</a> with this address ({{.Email}}) for your referral links, your stats and your payouts.</p>
<p style="color: #666">If you did not expect this mail, you can ignore it.</p>
</body></html>
`))
)

// addedMail writes the mail to a partner the brand added, to the outbox in tx, due at now.
func (v *Invitations) addedMail(ctx context.Context, tx sqlx.ExecerContext, prog programs.Program, p programs.Partner, now time.Time) error {
	data := addedMailData{Name: p.Name, Program: prog.Name, Domain: prog.Domain, Terms: prog.Terms().Describe(), Email: p.Email,
		Link: strings.TrimRight(v.BaseURL, "/") + PortalPath}
	var text, html bytes.Buffer
	if err := addedText.Execute(&text, data); err != nil {
		return err
	}
	if err := addedHTML.Execute(&html, data); err != nil {
		return err
	}
	return outbox.Enqueue(ctx, tx, outbox.Message{To: p.Email, Subject: prog.Name + " added you to its partner program",
		Text: text.String(), HTML: html.String()}, now)
}
