package web

import (
	"bytes"
	"context"
	"html/template"
	"regexp"
	"strings"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/mail"
)

// links finds the addresses in a plain-text mail, to show them as links.
var links = regexp.MustCompile(`https?://[^\s<>"]+`)

// linkify escapes text and makes each address in it a link.
func linkify(text string) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range links.FindAllStringIndex(text, -1) {
		b.WriteString(template.HTMLEscapeString(text[last:m[0]]))
		u := template.HTMLEscapeString(text[m[0]:m[1]])
		b.WriteString(`<a href="` + u + `">` + u + `</a>`)
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	return template.HTML(b.String()) //nolint:gosec // every piece is escaped above
}

var mailboxPage = template.Must(template.New("mail").Funcs(template.FuncMap{"linkify": linkify}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development mailbox · reftrack</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1d2733}
h1{font-size:1.4rem}article{border:1px solid #d0d7de;border-radius:6px;padding:1rem;margin:1rem 0}
h2{font-size:1.1rem;margin:0}.meta{color:#57606a;font-size:.9rem}pre{white-space:pre-wrap;font:inherit}</style></head><body>
<h1>Development mailbox</h1>
<p class="meta">Mail this server would have sent: no SMTP_URL is set, so it is kept here (the newest {{.Limit}}, until the server stops).</p>
{{range .Messages}}<article data-mail-id="{{.ID}}">
<h2>{{.Subject}}</h2>
<p class="meta">To <span class="to">{{.To}}</span> · from {{.From}} · {{.At.UTC.Format "2006-01-02 15:04:05 UTC"}}</p>
<pre>{{linkify .Text}}</pre>
</article>{{else}}<p>No mail yet.</p>{{end}}
</body></html>`))

// MailboxLimit is how many messages the development mailbox keeps.
const MailboxLimit = 100

// DevMail shows the development mailbox: the mail kept instead of sent, newest first. 404 when mail goes
// through SMTP (or in production, where SMTP is required).
func (h *Pages) DevMail(_ context.Context, _ gen.DevMailRequestObject) (gen.DevMailResponseObject, error) {
	if h.Mailbox == nil {
		body, n := pages.Render(pages.Page{Title: "Not available", Error: "This server sends its mail through SMTP; there is no development mailbox."})
		return gen.DevMail404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	var b bytes.Buffer
	if err := mailboxPage.Execute(&b, struct {
		Limit    int
		Messages []mail.Kept
	}{MailboxLimit, h.Mailbox.Messages()}); err != nil {
		return nil, err
	}
	return gen.DevMail200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: bytes.NewReader(b.Bytes()),
		ContentLength: int64(b.Len())}}, nil
}
