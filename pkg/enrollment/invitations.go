package enrollment

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	htmltemplate "html/template"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/audit"
	outbox "github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/secret"
)

// Invitation limits.
const (
	MaxInvitations  = 50                  // per request
	InvitationTTL   = 30 * 24 * time.Hour // a link is valid this long from its last sending
	MaxMessage      = 2000                // characters of the brand's note
	MaxName         = 200
	maxEmail        = 254 // RFC 5321's limit (the spec's format: email), within the spec's maxLength 320
	maxLocalPart    = 64
	invitationToken = 32 // random characters of an invitation link's token
)

// Invitation statuses as shown: a sent invitation past its expiry reads expired.
const (
	InvitationSent     = "sent"
	InvitationExpired  = "expired"
	InvitationAccepted = "accepted"
	InvitationCanceled = "canceled"
)

// Invitation is an invitation as the routes show it.
type Invitation struct {
	ID         int64      `db:"id"`
	ProgramID  int64      `db:"program_id"`
	PartnerID  int64      `db:"partner_id"`
	Email      string     `db:"email"`
	Name       string     `db:"name"`
	Message    *string    `db:"message"`
	Status     string     `db:"status"`
	SentCount  int        `db:"sent_count"`
	LastSentAt time.Time  `db:"last_sent_at"`
	ExpiresAt  time.Time  `db:"expires_at"`
	AcceptedAt *time.Time `db:"accepted_at"`
	CreatedAt  time.Time  `db:"created_at"`
}

// Invitee is one person to invite.
type Invitee struct {
	Email   string
	Name    string // "" for the email's local part (a partner that exists keeps their name)
	Message string // "" for none
}

// Invitations invites partners by email; BaseURL makes the links in the mail.
type Invitations struct {
	DB      *sqlx.DB
	BaseURL string
}

const invitationColumns = `i.id, i.program_id, i.partner_id, i.email, pa.name, i.message,
	CASE WHEN i.status = 'sent' AND i.expires_at <= $2 THEN 'expired' ELSE i.status END AS status,
	i.sent_count, i.last_sent_at, i.expires_at, i.accepted_at, i.created_at
	FROM partner_invitations i JOIN partners pa ON pa.id = i.partner_id`

// List answers the program's invitations, newest first.
func (v *Invitations) List(ctx context.Context, programID int64, now time.Time) ([]Invitation, error) {
	list := []Invitation{}
	err := v.DB.SelectContext(ctx, &list, `SELECT `+invitationColumns+` WHERE i.program_id = $1 ORDER BY i.id DESC`, programID, now)
	return list, err
}

func read(ctx context.Context, q sqlx.QueryerContext, programID, id int64, now time.Time, lock bool) (Invitation, error) {
	suffix := ""
	if lock {
		suffix = " FOR UPDATE OF i"
	}
	var out Invitation
	err := sqlx.GetContext(ctx, q, &out, `SELECT `+invitationColumns+` WHERE i.program_id = $1 AND i.id = $3`+suffix, programID, now, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Invitation{}, ErrInvitationNotFound
	}
	return out, err
}

// CheckInvitees refuses a batch of invitations out of range, in the words of the route's table: the
// position is named for a batch (batch true).
func CheckInvitees(list []Invitee, batch bool) error {
	if len(list) < 1 || len(list) > MaxInvitations {
		return invalid("invitations must hold 1 to %d invitations", MaxInvitations)
	}
	seen := map[string]bool{}
	for i, in := range list {
		field := func(name string) string {
			if batch {
				return "invitations[" + strconv.Itoa(i) + "]." + name
			}
			return name
		}
		if !ValidEmail(in.Email) {
			return invalid("%s must be an email address", field("email"))
		}
		if in.Name != "" && utf8.RuneCountInString(in.Name) > MaxName {
			return invalid("%s must be 1 to %d characters", field("name"), MaxName)
		}
		if utf8.RuneCountInString(in.Message) > MaxMessage {
			return invalid("%s must be at most %d characters", field("message"), MaxMessage)
		}
		key := strings.ToLower(in.Email)
		if seen[key] {
			return invalid("The same email is invited twice: %s", in.Email)
		}
		seen[key] = true
	}
	return nil
}

// ValidEmail reports whether s is one bare email address as the spec's `format: email` reads it (RFC
// 5321's mailbox, which strict validators of the spec hold clients to): net/mail parses it as itself, in
// ASCII (internationalised addresses are `idn-email`), at most 254 characters, an unquoted local part of
// at most 64, and a domain that is a host name with a dot (no address literal).
func ValidEmail(s string) bool {
	if s == "" || len(s) > maxEmail {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	local, domain := s[:at], s[at+1:]
	return len(local) <= maxLocalPart && !strings.HasPrefix(local, `"`) && strings.Contains(domain, ".") && hostName(domain)
}

// hostName reports whether s is a host name: labels of 1 to 63 letters, digits and inner hyphens.
func hostName(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Invite invites each invitee to the program, all or none, in one transaction: the partner (made, or the
// workspace's with that email) is enrolled invited, and a mail with the link goes to the outbox.
func (v *Invitations) Invite(ctx context.Context, r Request, programID int64, list []Invitee, batch bool) ([]Invitation, error) {
	if err := CheckInvitees(list, batch); err != nil {
		return nil, err
	}
	return inTx(ctx, v.DB, func(tx *sqlx.Tx) ([]Invitation, error) { return v.invite(ctx, tx, r, programID, list) })
}

func (v *Invitations) invite(ctx context.Context, tx *sqlx.Tx, r Request, programID int64, list []Invitee) ([]Invitation, error) {
	prog, err := programs.Get(ctx, tx, programID)
	if err != nil {
		return nil, err
	}
	// The partners are made (or found) and their enrollments locked in the order of their emails, whatever
	// the batch's: two batches naming the same people in different orders then wait for each other rather
	// than deadlock. They are refused, and invited, in the batch's order.
	type enrolled struct {
		p programs.Partner
		e programs.Enrollment
	}
	got := make([]enrolled, len(list))
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return strings.Compare(strings.ToLower(list[a].Email), strings.ToLower(list[b].Email))
	})
	for _, i := range order {
		in := list[i]
		name := in.Name
		if name == "" {
			name = in.Email[:strings.LastIndexByte(in.Email, '@')]
		}
		p, e, err := programs.Enroll(ctx, tx, programID, programs.NewPartner{Name: name, Email: in.Email}, programs.StatusInvited, r.Now)
		if err != nil {
			return nil, err
		}
		got[i] = enrolled{p, e}
	}
	out := make([]Invitation, 0, len(list))
	for i, in := range list {
		p, e := got[i].p, got[i].e
		switch e.Status {
		case programs.StatusApproved:
			return nil, conflict("%s is already a partner of this program", in.Email)
		case programs.StatusPending:
			return nil, conflict("%s applied to this program: approve the application", in.Email)
		case programs.StatusBanned:
			return nil, conflict("%s is banned from this program", in.Email)
		}
		token, err := secret.RandomString(invitationToken)
		if err != nil {
			return nil, err
		}
		var message *string
		if in.Message != "" {
			message = &in.Message
		}
		var id int64
		err = tx.GetContext(ctx, &id, `INSERT INTO partner_invitations (program_id, partner_id, email, message, token_hash,
				last_sent_at, expires_at, invited_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $6) RETURNING id`,
			programID, p.ID, in.Email, message, secret.Hash(token), r.Now, r.Now.Add(InvitationTTL), r.AccountID)
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code == "23505" {
			return nil, conflict("%s already has an open invitation: resend it", in.Email)
		}
		if err != nil {
			return nil, err
		}
		inv, err := read(ctx, tx, programID, id, r.Now, false)
		if err != nil {
			return nil, err
		}
		if err := v.mail(ctx, tx, prog, inv, token, r.Now); err != nil {
			return nil, err
		}
		if err := audit.Write(ctx, tx, audit.Entry{At: r.Now, Actor: r.actor(), Action: ActionInvite,
			Target: "partner:" + strconv.FormatInt(p.ID, 10), Detail: map[string]any{"program_id": programID,
				"invitation_id": id, "email": in.Email}}); err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

// Resend mails a sent (or expired) invitation again with a new link, valid InvitationTTL from now; the
// previous link stops working.
func (v *Invitations) Resend(ctx context.Context, r Request, programID, id int64) (Invitation, error) {
	return v.change(ctx, r, programID, id, func(tx *sqlx.Tx, inv Invitation, _ map[string]any) (bool, error) {
		switch inv.Status {
		case InvitationAccepted:
			return false, conflict("Invitation %d was accepted", id)
		case InvitationCanceled:
			return false, conflict("Invitation %d was canceled", id)
		}
		token, err := secret.RandomString(invitationToken)
		if err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE partner_invitations SET token_hash = $2, sent_count = sent_count + 1,
			last_sent_at = $3, expires_at = $4 WHERE id = $1`, id, secret.Hash(token), r.Now, r.Now.Add(InvitationTTL)); err != nil {
			return false, err
		}
		prog, err := programs.Get(ctx, tx, programID)
		if err != nil {
			return false, err
		}
		inv.ExpiresAt = r.Now.Add(InvitationTTL)
		return true, v.mail(ctx, tx, prog, inv, token, r.Now)
	}, ActionResend)
}

// Cancel cancels a sent (or expired) invitation: its link stops working and the enrollment it made is
// withdrawn, and any link the brand made for the partner in the program is turned off. A canceled one is
// answered unchanged.
func (v *Invitations) Cancel(ctx context.Context, r Request, programID, id int64) (Invitation, error) {
	return v.change(ctx, r, programID, id, func(tx *sqlx.Tx, inv Invitation, detail map[string]any) (bool, error) {
		switch inv.Status {
		case InvitationAccepted:
			return false, conflict("Invitation %d was accepted", id)
		case InvitationCanceled:
			return false, nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE partner_invitations SET status = 'canceled', canceled_at = $2 WHERE id = $1`,
			id, r.Now); err != nil {
			return false, err
		}
		e, err := programs.LockEnrollment(ctx, tx, programID, inv.PartnerID)
		if err != nil && !errors.Is(err, programs.ErrPartnerNotFound) {
			return false, err
		}
		if err != nil || e.Status != programs.StatusInvited {
			return true, nil
		}
		if err := programs.Withdraw(ctx, tx, e.ID, r.Now); err != nil {
			return false, err
		}
		// Out of the program, the partner earns nothing there: a link the brand made for them goes off
		// (as a ban's do; the brand may turn it on again once they are back).
		links, err := programs.DisablePartnerLinks(ctx, tx, programID, inv.PartnerID)
		detail["links_disabled"] = links
		return true, err
	}, ActionCancel)
}

// change runs action on the program's invitation id, locked, in one transaction; when action changed it,
// the audit log records action (as auditAction, with the detail action may add to) and the invitation is
// read again.
func (v *Invitations) change(ctx context.Context, r Request, programID, id int64,
	action func(tx *sqlx.Tx, inv Invitation, detail map[string]any) (bool, error), auditAction string) (Invitation, error) {
	return inTx(ctx, v.DB, func(tx *sqlx.Tx) (Invitation, error) {
		inv, err := read(ctx, tx, programID, id, r.Now, true)
		if err != nil {
			return Invitation{}, err
		}
		detail := map[string]any{"program_id": programID, "email": inv.Email}
		changed, err := action(tx, inv, detail)
		if err != nil || !changed {
			return inv, err
		}
		if err := audit.Write(ctx, tx, audit.Entry{At: r.Now, Actor: r.actor(), Action: auditAction,
			Target: "invitation:" + strconv.FormatInt(id, 10), Detail: detail}); err != nil {
			return Invitation{}, err
		}
		return read(ctx, tx, programID, id, r.Now, false)
	})
}

// AcceptPath is where an invitation's link leads, before its token.
const AcceptPath = "/partners/invitations/"

type invitationMail struct {
	Name, Program, Domain, Terms, Message, Link, Expires string
}

var (
	invitationText = texttemplate.Must(texttemplate.New("text").Parse(`Hello {{.Name}},

{{.Program}} ({{.Domain}}) invites you to join its partner program: share your referral link and earn a
commission on the sales you bring.

The terms: {{.Terms}}
{{if .Message}}
Their note:

{{.Message}}
{{end}}
Accept the invitation:
{{.Link}}

The link is valid until {{.Expires}}. If you did not expect this mail, you can ignore it.
`))
	invitationHTML = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>Hello {{.Name}},</p>
<p><strong>{{.Program}}</strong> ({{.Domain}}) invites you to join its partner program: share your referral link and earn a commission on the sales you bring.</p>
<p>The terms: {{.Terms}}</p>
{{if .Message}}<blockquote style="border-left: 3px solid #ccc; margin: 0; padding-left: 1em; white-space: pre-wrap">{{.Message}}</blockquote>{{end}}
<p><a href="{{.Link}}">Accept the invitation</a></p>
<p style="color: #666">The link is valid until {{.Expires}}. If you did not expect this mail, you can ignore it.</p>
</body></html>
`))
)

// mail writes the invitation's mail, with the link for token, to the outbox in tx, due at now.
func (v *Invitations) mail(ctx context.Context, tx *sqlx.Tx, prog programs.Program, inv Invitation, token string, now time.Time) error {
	data := invitationMail{Name: inv.Name, Program: prog.Name, Domain: prog.Domain, Terms: prog.Terms().Describe(), Link: strings.TrimRight(v.BaseURL, "/") + AcceptPath + token,
		Expires: inv.ExpiresAt.UTC().Format("2 January 2006, 15:04 UTC")}
	if inv.Message != nil {
		data.Message = *inv.Message
	}
	var text, html bytes.Buffer
	if err := invitationText.Execute(&text, data); err != nil {
		return err
	}
	if err := invitationHTML.Execute(&html, data); err != nil {
		return err
	}
	return outbox.Enqueue(ctx, tx, outbox.Message{To: inv.Email, Subject: prog.Name + " invites you to its partner program",
		Text: text.String(), HTML: html.String()}, now)
}
