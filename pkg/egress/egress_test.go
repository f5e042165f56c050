package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/reftrack/reftrack/pkg/egress"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr       string
		prod, devl bool
	}{
		{"93.184.216.34", true, true},
		{"8.8.8.8", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"::ffff:93.184.216.34", true, true},
		{"64:ff9b::5db8:d822", true, true}, // NAT64 of 93.184.216.34

		{"10.1.2.3", false, false},
		{"172.16.0.1", false, false},
		{"172.31.255.255", false, false},
		{"192.168.1.1", false, false},
		{"fc00::1", false, false},
		{"fd12:3456::1", false, false},
		{"169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"fe80::1%eth0", false, false},
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"ff02::1", false, false},
		{"ff01::1", false, false},
		{"ff0e::1", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"::", false, false},
		{"255.255.255.255", false, false},
		{"240.0.0.1", false, false},
		{"100.64.0.1", false, false},
		{"198.18.0.1", false, false},
		{"::ffff:10.0.0.1", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"::ffff:100.64.0.1", false, false},
		{"::ffff:0.0.0.1", false, false},
		{"::10.0.0.1", false, false},
		{"64:ff9b::a00:1", false, false}, // NAT64 of 10.0.0.1
		{"64:ff9b:1::1", false, false},
		{"fec0::1", false, false},

		{"127.0.0.1", false, true},
		{"127.1.2.3", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.addr)
		if got := (egress.Policy{}).Allowed(ip); got != c.prod {
			t.Errorf("production Allowed(%s) = %v, want %v", c.addr, got, c.prod)
		}
		if got := (egress.Policy{Development: true}).Allowed(ip); got != c.devl {
			t.Errorf("development Allowed(%s) = %v, want %v", c.addr, got, c.devl)
		}
	}
	if (egress.Policy{Development: true}).Allowed(netip.Addr{}) {
		t.Error("the zero Addr is allowed")
	}
}

// dnsServer is a real DNS server on 127.0.0.1 (UDP) answering A and AAAA queries from answer (each with
// the addresses of its family); it counts the A queries per name, so answer can change its mind between
// queries (rebinding). Names answer does not know (nil) get NXDOMAIN.
type dnsServer struct {
	answer func(name string, n int) []netip.Addr // n: 1 for the first A query of name
	addr   string

	mu      sync.Mutex
	queries map[string]int
}

func newDNS(t *testing.T, answer func(name string, n int) []netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{answer: answer, addr: pc.LocalAddr().String(), queries: map[string]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return // closed
			}
			if resp := s.reply(buf[:n]); resp != nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", s.addr)
		},
	}
}

func (s *dnsServer) reply(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")

	var answer []netip.Addr
	known := false
	if q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeAAAA {
		s.mu.Lock()
		n := s.queries[name]
		if q.Type == dnsmessage.TypeA {
			n++
			s.queries[name] = n
		}
		s.mu.Unlock()
		if q.Type == dnsmessage.TypeA {
			answer = s.answer(name, n)
		} else {
			answer = s.answer(name, max(n, 1))
		}
		known = answer != nil
	}
	rcode := dnsmessage.RCodeSuccess
	if !known {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired,
		RecursionAvailable: true, RCode: rcode,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil
	}
	if err := b.Question(q); err != nil {
		return nil
	}
	if err := b.StartAnswers(); err != nil {
		return nil
	}
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
	for _, a := range answer {
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil
		}
	}
	resp, err := b.Finish()
	if err != nil {
		return nil
	}
	return resp
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	zone := map[string][]netip.Addr{
		"public.test":   addrs("93.184.216.34"),
		"public6.test":  addrs("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"),
		"private.test":  addrs("10.0.0.5"),
		"metadata.test": addrs("169.254.169.254"),
		"mixed.test":    addrs("93.184.216.34", "192.168.1.10"),
		"mixed6.test":   addrs("93.184.216.34", "fd00::1"),
		"loop.test":     addrs("127.0.0.1"),
		"empty.test":    {}, // exists, no addresses
	}
	resolver := newDNS(t, func(name string, _ int) []netip.Addr { return zone[name] })

	const (
		refused = iota
		allowed
	)
	cases := []struct {
		url        string
		prod, devl int
	}{
		{"https://public.test/hooks/reftrack", allowed, allowed},
		{"https://public.test:8443/hooks?x=1", allowed, allowed},
		{"https://PUBLIC.test./hooks", allowed, allowed},
		{"HTTPS://public.test/", allowed, allowed},
		{"https://public6.test/", allowed, allowed},
		{"http://public.test/hooks", refused, allowed},
		{"ftp://public.test/", refused, refused},
		{"ws://public.test/", refused, refused},
		{"https:///hooks", refused, refused},
		{"https://:443/hooks", refused, refused},
		{"https:public.test", refused, refused},
		{"https://user:pw@public.test/", refused, refused},
		{"https://user@public.test/", refused, refused},
		{"/hooks", refused, refused},
		{"public.test/hooks", refused, refused},
		{"", refused, refused},
		{"https://public.test:0/", refused, refused},
		{"https://public.test:65536/", refused, refused},
		{"https://10.0.0.1/", refused, refused},
		{"https://169.254.169.254/latest/meta-data/", refused, refused},
		{"https://[fe80::1%25eth0]/", refused, refused},
		{"https://[::ffff:10.0.0.1]/", refused, refused},
		{"https://[::1]/", refused, allowed},
		{"http://127.0.0.1:8080/hooks", refused, allowed},
		{"https://93.184.216.34/", refused, allowed}, // production wants a host name
		{"https://private.test/", refused, refused},
		{"https://metadata.test/", refused, refused},
		{"https://mixed.test/", refused, refused},
		{"https://mixed6.test/", refused, refused},
		{"https://loop.test/", refused, allowed},
		{"https://localhost/", refused, allowed}, // /etc/hosts; in production refused whatever answers
		{"https://missing.test/", refused, refused},
		{"https://empty.test/", refused, refused},
	}
	for _, c := range cases {
		for _, p := range []struct {
			policy egress.Policy
			want   int
		}{
			{egress.Policy{Resolver: resolver}, c.prod},
			{egress.Policy{Development: true, Resolver: resolver}, c.devl},
		} {
			if c.url == "https://localhost/" && p.policy.Development {
				continue // depends on the machine's /etc/hosts
			}
			err := p.policy.CheckURL(t.Context(), c.url)
			switch {
			case p.want == allowed && err != nil:
				t.Errorf("Development=%v CheckURL(%q) = %v, want nil", p.policy.Development, c.url, err)
			case p.want == refused && !errors.Is(err, egress.ErrNotPublic):
				t.Errorf("Development=%v CheckURL(%q) = %v, want ErrNotPublic", p.policy.Development, c.url, err)
			}
		}
	}
}

func TestCheckURLCanceled(t *testing.T) {
	t.Parallel()
	resolver := newDNS(t, func(string, int) []netip.Addr { return addrs("93.184.216.34") })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := egress.Policy{Resolver: resolver}.CheckURL(ctx, "https://public.test/")
	if err == nil || errors.Is(err, egress.ErrNotPublic) {
		t.Fatalf("CheckURL with a canceled context = %v, want an error that is not a refusal", err)
	}
}

// countingServer is a real server on 127.0.0.1 counting the requests it sees.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// TestRebinding: the name resolves to a public address when registered and to 127.0.0.1 when
// connected to. The dialer's check on the actual address refuses it in production.
func TestRebinding(t *testing.T) {
	t.Parallel()
	for _, dev := range []bool{false, true} {
		t.Run(map[bool]string{false: "production", true: "development"}[dev], func(t *testing.T) {
			t.Parallel()
			srv, requests := countingServer(t, ok)
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			resolver := newDNS(t, func(name string, n int) []netip.Addr {
				switch {
				case name == "rebind.test" && n == 1:
					return addrs("93.184.216.34")
				case name == "rebind.test" || name == "loop.test":
					return addrs("127.0.0.1")
				}
				return nil
			})
			policy := egress.Policy{Development: dev, Resolver: resolver}
			client := policy.Client(5 * time.Second)

			target := "http://rebind.test:" + strconv.Itoa(port) + "/hook"
			if dev {
				if err := policy.CheckURL(t.Context(), target); err != nil {
					t.Fatalf("CheckURL(%s) = %v", target, err)
				}
			} else if err := policy.CheckURL(t.Context(), strings.Replace(target, "http:", "https:", 1)); err != nil {
				t.Fatalf("CheckURL(https version of %s) = %v", target, err) // first answer: public
			}

			// Rebound name, a name that passed no check, and an IP literal: all reach 127.0.0.1.
			for _, u := range []string{target, "http://loop.test:" + strconv.Itoa(port) + "/", srv.URL + "/"} {
				resp, err := client.Get(u)
				if !dev {
					if !errors.Is(err, egress.ErrNotPublic) {
						t.Errorf("GET %s = %v, want ErrNotPublic", u, err)
					}
					if resp != nil {
						resp.Body.Close()
					}
					continue
				}
				if err != nil {
					t.Fatalf("GET %s: %v", u, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s = %d, want 200", u, resp.StatusCode)
				}
			}
			want := int64(0)
			if dev {
				want = 3
			}
			if got := requests.Load(); got != want {
				t.Errorf("server saw %d requests, want %d", got, want)
			}
		})
	}
}

func TestNoRedirects(t *testing.T) {
	t.Parallel()
	var next atomic.Int64
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			next.Add(1)
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Redirect(w, r, "/next", http.StatusFound)
	})
	client := egress.Policy{Development: true}.Client(5 * time.Second)
	resp, err := client.Get(srv.URL + "/start")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/next" {
		t.Errorf("got %d Location %q, want the 302 to /next itself", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := next.Load(); n != 0 {
		t.Errorf("/next requested %d times, want 0", n)
	}
}

// TestNoProxy: a proxy from the environment is not used (through it the dialer would check the
// proxy's address, not the brand's).
func TestNoProxy(t *testing.T) {
	t.Parallel()
	client := egress.Policy{}.Client(time.Second)
	if p := client.Transport.(*http.Transport).Proxy; p != nil {
		u, _ := p(&http.Request{URL: &url.URL{Scheme: "https", Host: "public.test"}})
		t.Errorf("transport has a proxy func (gives %v)", u)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close (cleanups run last first)

	client := egress.Policy{Development: true}.Client(200 * time.Millisecond)
	resp, err := client.Get(srv.URL + "/slow")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET answered %d, want a timeout", resp.StatusCode)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("GET = %v, want a timeout", err)
	}
}

// Each refusal says what is wrong (its Refusal, whose message the API answers); an address that is not
// public is ErrNotPublic alone.
func TestCheckURLSaysWhy(t *testing.T) {
	t.Parallel()
	zone := map[string][]netip.Addr{"public.test": addrs("93.184.216.34"), "private.test": addrs("10.0.0.5"), "empty.test": {}}
	prod := egress.Policy{Resolver: newDNS(t, func(name string, _ int) []netip.Addr { return zone[name] })}
	for url, want := range map[string]error{
		"http://public.test/hooks":     egress.ErrScheme,
		"ftp://public.test/":           egress.ErrScheme,
		"https:///hooks":               egress.ErrNotAbsolute,
		"public.test/hooks":            egress.ErrNotAbsolute,
		"not a url":                    egress.ErrNotAbsolute,
		"https://user:pw@public.test/": egress.ErrUserinfo,
		"https://public.test:0/":       egress.ErrPort,
		"https://93.184.216.34/":       egress.ErrIPLiteral,
		"https://missing.test/":        egress.ErrUnresolved,
		"https://empty.test/":          egress.ErrUnresolved,
		"https://10.0.0.1/":            egress.ErrNotPublic,
		"https://private.test/":        egress.ErrNotPublic,
	} {
		err := prod.CheckURL(t.Context(), url)
		var r *egress.Refusal
		switch {
		case !errors.Is(err, want) || !errors.Is(err, egress.ErrNotPublic):
			t.Errorf("CheckURL(%q) = %v, want %v", url, err, want)
		case want == egress.ErrNotPublic && errors.As(err, &r):
			t.Errorf("CheckURL(%q) = %v: a non-public address is not a Refusal of its own", url, err)
		}
	}
}
