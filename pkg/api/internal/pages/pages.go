// Package pages renders the few server-side HTML pages (login, sign-out, development issuer, the partner
// portal's invitation and application pages): one small template, no script.
package pages

import (
	"bytes"
	"html/template"
)

var pages = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · reftrack</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1d2733}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.6rem 1.2rem;font:inherit;background:#1f6feb;color:#fff;border:0;border-radius:4px}
.note{color:#57606a;font-size:.9rem}.error{color:#b42318}</style></head><body><main>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
{{if .Link}}<p><a href="{{.Link}}">{{.LinkText}}</a></p>{{end}}
{{if .Form}}<form method="post" action="{{.Action}}">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
<label for="email">Email</label><input id="email" name="email" type="email" required autofocus value="{{.Email}}">
<label for="name">Name</label><input id="name" name="name" type="text" value="{{.Name}}">
<button type="submit">Sign in</button>
<p class="note">Development sign-in: this server has no OpenID Connect issuer configured, so any email signs in.</p>
</form>{{end}}
{{with .Post}}<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
{{if .Apply}}<label for="message">A note to the brand: who you are, where you will share your link</label>
<textarea id="message" name="message" maxlength="2000" rows="4" style="width:100%;font:inherit"></textarea>
<label for="website">Your website</label><input id="website" name="website" type="url" placeholder="https://">{{end}}
<button type="submit">{{.Button}}</button>
</form>{{end}}
</main></body></html>`))

// Page is what one page shows.
type Page struct {
	Title, Message, Error, Action, Email, Name string
	Link, LinkText                             string
	Form                                       bool
	Hidden                                     map[string]string
	// Post is a form that posts to the page's own route with the session's CSRF token (nil for none).
	Post *Post
}

// Post is a page's form: a button, and for an application the note and website fields.
type Post struct {
	Action, CSRF, Button string
	Apply                bool
}

// Render renders p, with its length for Content-Length.
func Render(p Page) (*bytes.Reader, int64) {
	var b bytes.Buffer
	if err := pages.Execute(&b, p); err != nil {
		b.Reset()
		b.WriteString("reftrack: page error")
	}
	return bytes.NewReader(b.Bytes()), int64(b.Len())
}
