// Package mail sends the service's mail (partner invitations and notices). In production it goes through
// an SMTP server (SMTP_URL, MAIL_FROM) with wneessen/go-mail, STARTTLS whenever the server offers it; in
// development without SMTP_URL, messages are kept in a Mailbox, which the server shows at /dev/mail.
package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strconv"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// A Message is one mail to one recipient.
type Message struct {
	To      string
	Subject string
	Text    string // the plain-text body, always sent
	HTML    string // an HTML alternative; "" for none
}

// A Sender sends messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// check refuses what no server should be asked to send.
func (m Message) check() error {
	if _, err := netmail.ParseAddress(m.To); err != nil {
		return fmt.Errorf("mail: recipient %q: %w", m.To, err)
	}
	if m.Subject == "" || m.Text == "" {
		return errors.New("mail: a message needs a subject and a text body")
	}
	return nil
}

// Timeout bounds one delivery to the SMTP server (connection, STARTTLS, authentication and the message).
const Timeout = 30 * time.Second

// SMTP sends through an SMTP server.
type SMTP struct {
	client *gomail.Client
	from   string
}

// An Option adjusts NewSMTP.
type Option func(*tls.Config)

// TrustRoots verifies the server's certificate against roots instead of the system's (a test's own CA).
func TrustRoots(roots *x509.CertPool) Option { return func(c *tls.Config) { c.RootCAs = roots } }

// NewSMTP reads an SMTP_URL: smtp://[user[:password]@]host[:port] (port 587 by default; STARTTLS when the
// server offers it, plain otherwise, as a local relay may) or smtps://… (TLS from the start, port 465).
// A user and password are sent only over TLS, by the strongest mechanism both sides know: a server that
// offers neither TLS nor a challenge mechanism gets no password and the send fails. from is MAIL_FROM, an
// address with or without a name.
func NewSMTP(rawURL, from string, options ...Option) (*SMTP, error) {
	if _, err := netmail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("MAIL_FROM %q: %w", from, err)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("SMTP_URL: want smtp://[user[:password]@]host[:port]")
	}
	tlsConfig := &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	for _, o := range options {
		o(tlsConfig)
	}
	opts := []gomail.Option{gomail.WithTimeout(Timeout), gomail.WithTLSConfig(tlsConfig)}
	port := 587
	switch u.Scheme {
	case "smtp":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	case "smtps":
		port = 465
		opts = append(opts, gomail.WithSSL())
	default:
		return nil, fmt.Errorf("SMTP_URL: scheme %q, want smtp or smtps", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("SMTP_URL: port %q", p)
		}
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil {
		password, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(password))
	}
	client, err := gomail.NewClient(u.Hostname(), opts...)
	if err != nil {
		return nil, fmt.Errorf("SMTP_URL: %w", err)
	}
	return &SMTP{client: client, from: from}, nil
}

// Send delivers m to the server, on a connection of its own.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	if err := m.check(); err != nil {
		return err
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("mail: from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("mail: to: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetMessageID()
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	if err := s.client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: send to %s: %w", m.To, err)
	}
	return nil
}

// A Kept message is one a Mailbox holds.
type Kept struct {
	Message
	ID   int
	From string
	At   time.Time
}

// Mailbox keeps the newest messages in memory instead of sending them: development's mail, without an
// SMTP server. It forgets the oldest beyond its limit.
type Mailbox struct {
	from  string
	limit int
	now   func() time.Time

	mu   sync.Mutex
	next int
	kept []Kept // oldest first
}

// NewMailbox keeps up to limit messages, stamped by now.
func NewMailbox(from string, limit int, now func() time.Time) *Mailbox {
	return &Mailbox{from: from, limit: max(limit, 1), now: now}
}

// Send keeps m.
func (b *Mailbox) Send(_ context.Context, m Message) error {
	if err := m.check(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	b.kept = append(b.kept, Kept{Message: m, ID: b.next, From: b.from, At: b.now()})
	if len(b.kept) > b.limit {
		b.kept = append([]Kept(nil), b.kept[len(b.kept)-b.limit:]...)
	}
	return nil
}

// Messages are the kept messages, newest first.
func (b *Mailbox) Messages() []Kept {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Kept, 0, len(b.kept))
	for i := len(b.kept) - 1; i >= 0; i-- {
		out = append(out, b.kept[i])
	}
	return out
}
