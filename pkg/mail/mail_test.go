package mail_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/testkit/tools"
)

// mailpit is a real SMTP server process (axllent/mailpit, installed by make test into bin/) with a JSON API
// to read what it received.
type mailpit struct {
	smtp, api string
}

// startMailpit runs mailpit on free local ports until the test ends, with extra flags. Without the binary
// (MAILPIT, or mailpit on PATH) the test is skipped, or fails under make test (REFTRACK_REQUIRE_TOOLS).
//
// A free port is found by binding it and letting it go, so something else may take it before mailpit binds
// it: another test's mailpit, whose messages this test would then read (seen under load). Mailpit exits when
// a bind fails; the test waits until both listening sockets are its own process's (Linux's /proc), and
// starts it again on other ports when it exited.
func startMailpit(t *testing.T, flags ...string) mailpit {
	t.Helper()
	bin := mailpitBinary(t)
	for range 5 {
		if m, ok := runMailpit(t, bin, mailpit{smtp: freeAddr(t), api: freeAddr(t)}, flags); ok {
			return m
		}
	}
	t.Fatal("mailpit exited five times, each on ports free a moment before")
	return mailpit{}
}

// mailpitBinary is the mailpit to run: MAILPIT, or mailpit on PATH. Without one the test is skipped, or
// fails under make test (REFTRACK_REQUIRE_TOOLS).
func mailpitBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MAILPIT")
	if bin == "" {
		bin, _ = exec.LookPath("mailpit")
	}
	if bin == "" {
		tools.Missing(t, "no mailpit: make test builds it into bin/ (MAILPIT), or go install github.com/axllent/mailpit@v1.27.11")
	}
	return bin
}

// runMailpit starts mailpit on m's addresses and waits until it listens on both (true), or until it
// exited (false: a port was taken first).
func runMailpit(t *testing.T, bin string, m mailpit, flags []string) (mailpit, bool) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--smtp", m.smtp, "--listen", m.api, "--database", filepath.Join(t.TempDir(), "mail.db")}, flags...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	for {
		select {
		case <-exited:
			return mailpit{}, false
		default:
		}
		if listens(t, cmd.Process.Pid, m.smtp) && listens(t, cmd.Process.Pid, m.api) {
			if r, err := http.Get("http://" + m.api + "/api/v1/messages"); err == nil {
				r.Body.Close()
				if r.StatusCode == http.StatusOK {
					return m, true
				}
			}
		}
		// However long a loaded machine takes: go test's -timeout bounds a mailpit that never listens.
		time.Sleep(20 * time.Millisecond) // polling a process's sockets: there is nothing to wait on
	}
}

// listens reports whether process pid holds the socket listening on addr (127.0.0.1:port), as
// /proc/net/tcp and the process's descriptors say.
func listens(t *testing.T, pid int, addr string) bool {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("finding who listens on %s: %v", addr, err)
	}
	// Each line: sl local_address rem_address st … inode, with local_address 0100007F:1F90 for
	// 127.0.0.1:8080 and st 0A for LISTEN.
	local := fmt.Sprintf("0100007F:%04X", n)
	var inode string
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == local && f[3] == "0A" {
			inode = f[9]
		}
	}
	if inode == "" {
		return false
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false // it exited
	}
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == "socket:["+inode+"]" {
			return true
		}
	}
	return false
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type received struct {
	From    string
	To      []string
	Subject string
	Text    string
	HTML    string
}

// messages reads what mailpit received, newest first.
func (m mailpit) messages(t *testing.T) []received {
	t.Helper()
	var list struct {
		Messages []struct{ ID string }
	}
	get(t, "http://"+m.api+"/api/v1/messages", &list)
	var out []received
	for _, s := range list.Messages {
		var msg struct {
			From    struct{ Address string }
			To      []struct{ Address string }
			Subject string
			Text    string
			HTML    string
		}
		get(t, "http://"+m.api+"/api/v1/message/"+s.ID, &msg)
		r := received{From: msg.From.Address, Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML}
		for _, to := range msg.To {
			r.To = append(r.To, to.Address)
		}
		out = append(out, r)
	}
	return out
}

func get(t *testing.T, url string, v any) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func TestSMTPDeliversToARealServer(t *testing.T) {
	t.Parallel()
	m := startMailpit(t)
	s, err := mail.NewSMTP("smtp://"+m.smtp, "Reftrack <noreply@reftrack.test>")
	if err != nil {
		t.Fatal(err)
	}
	msg := mail.Message{To: "ann@partner.test", Subject: "You are invited to Acme's program",
		Text: "Accept: https://reftrack.test/partners/invitations/abc", HTML: "<p>Accept: <a href=\"https://reftrack.test/partners/invitations/abc\">here</a></p>"}
	if err := s.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := m.messages(t)
	if len(got) != 1 {
		t.Fatalf("received %d messages, want 1", len(got))
	}
	r := got[0]
	if r.From != "noreply@reftrack.test" || len(r.To) != 1 || r.To[0] != msg.To || r.Subject != msg.Subject ||
		strings.TrimSpace(r.Text) != msg.Text || !strings.Contains(r.HTML, `href="https://reftrack.test/partners/invitations/abc"`) {
		t.Fatalf("received %+v", r)
	}
	// What no server should be asked to send is refused before a connection, and nothing arrives.
	for _, bad := range []mail.Message{{To: "not an address", Subject: "s", Text: "t"}, {To: "ann@partner.test", Text: "t"}} {
		if err := s.Send(context.Background(), bad); err == nil {
			t.Errorf("sent %+v", bad)
		}
	}
	if n := len(m.messages(t)); n != 1 {
		t.Fatalf("after the refused ones the server has %d messages, want 1", n)
	}
}

// With a user in SMTP_URL the client authenticates, over STARTTLS; a wrong password is an error and sends
// nothing; and a server that does not offer TLS never gets the password.
func TestSMTPAuthenticatesOverTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	roots := selfSigned(t, dir)
	passwords := filepath.Join(dir, "passwords")
	if err := os.WriteFile(passwords, []byte("relay:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := startMailpit(t, "--smtp-auth-file", passwords, "--smtp-tls-cert", filepath.Join(dir, "cert.pem"),
		"--smtp-tls-key", filepath.Join(dir, "key.pem"), "--smtp-require-starttls")
	msg := mail.Message{To: "bob@partner.test", Subject: "Your payout was sent", Text: "12.00 USD"}
	wrong, err := mail.NewSMTP("smtp://relay:nope@"+m.smtp, "noreply@reftrack.test", mail.TrustRoots(roots))
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.Send(context.Background(), msg); err == nil {
		t.Fatal("sent with a wrong password")
	}
	right, err := mail.NewSMTP("smtp://relay:s3cret@"+m.smtp, "noreply@reftrack.test", mail.TrustRoots(roots))
	if err != nil {
		t.Fatal(err)
	}
	if err := right.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if got := m.messages(t); len(got) != 1 || got[0].To[0] != "bob@partner.test" {
		t.Fatalf("received %+v", got)
	}

	plain := startMailpit(t, "--smtp-auth-file", passwords, "--smtp-auth-allow-insecure")
	s, err := mail.NewSMTP("smtp://relay:s3cret@"+plain.smtp, "noreply@reftrack.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), msg); err == nil || len(plain.messages(t)) != 0 {
		t.Fatalf("sent a password in the clear (err %v)", err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key to dir (cert.pem, key.pem) and returns a pool
// that trusts it.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func TestNewSMTPRefusesBadSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, from string }{
		{"http://mail.example.com", "noreply@example.com"},
		{"smtp://", "noreply@example.com"},
		{"smtp://mail.example.com:port", "noreply@example.com"},
		{"smtp://mail.example.com", "not an address"},
	} {
		if _, err := mail.NewSMTP(c.url, c.from); err == nil {
			t.Errorf("NewSMTP(%q, %q) accepted", c.url, c.from)
		}
	}
	if _, err := mail.NewSMTP("smtps://u:p@mail.example.com", "Reftrack <noreply@example.com>"); err != nil {
		t.Errorf("smtps: %v", err)
	}
}

func TestMailboxKeepsTheNewest(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	b := mail.NewMailbox("noreply@reftrack.test", 2, func() time.Time { return at })
	for i := range 3 {
		if err := b.Send(context.Background(), mail.Message{To: fmt.Sprintf("p%d@partner.test", i), Subject: "s", Text: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(context.Background(), mail.Message{To: "nobody", Subject: "s", Text: "t"}); err == nil {
		t.Fatal("kept a message to no address")
	}
	got := b.Messages()
	if len(got) != 2 || got[0].To != "p2@partner.test" || got[1].To != "p1@partner.test" || got[0].ID != 3 ||
		got[0].From != "noreply@reftrack.test" || !got[0].At.Equal(at) {
		t.Fatalf("kept %+v", got)
	}
}

// A mailpit whose port another process took first is never used: it exits, and the test would start
// another on other ports. listens tells a socket of the process from one of another.
func TestMailpitOnATakenPortIsNotUsed(t *testing.T) {
	t.Parallel()
	bin := mailpitBinary(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if !listens(t, os.Getpid(), taken.Addr().String()) {
		t.Error("listens: the test's own listener is not its own")
	}
	if _, ok := runMailpit(t, bin, mailpit{smtp: freeAddr(t), api: taken.Addr().String()}, nil); ok {
		t.Error("a mailpit was used whose API port another process held")
	}
	if _, ok := runMailpit(t, bin, mailpit{smtp: taken.Addr().String(), api: freeAddr(t)}, nil); ok {
		t.Error("a mailpit was used whose SMTP port another process held")
	}
	m := startMailpit(t)
	if listens(t, os.Getpid(), m.smtp) || listens(t, os.Getpid(), m.api) {
		t.Error("listens: mailpit's sockets counted as the test's")
	}
}
