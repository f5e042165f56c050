// Package egress makes connections to brands' URLs (outbound webhooks). A brand chooses the URL, so
// without a check it could point our servers at the internal network (databases, the cloud metadata
// service at 169.254.169.254, admin ports on loopback). The check runs twice: CheckURL when the URL is
// registered, so the brand gets an answer at once, and the dialer of Client on every connection, on the
// address actually connected to, because the name may resolve to another address by then (DNS
// rebinding).
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// ErrNotPublic is wrapped by every refusal, from CheckURL and from Client's dialer. Its text is the
// answer the API gives (400) to an address that is not public; the other refusals of CheckURL are
// Refusals, which say what is wrong in their own words.
var ErrNotPublic = errors.New("url must be a public https URL")

// A Refusal is a URL refused by CheckURL for its form or its name, in the words the API answers (400),
// the development exceptions said where they apply. It is ErrNotPublic too (errors.Is).
type Refusal struct{ Message string }

func (r *Refusal) Error() string { return r.Message }
func (r *Refusal) Unwrap() error { return ErrNotPublic }

// CheckURL's refusals other than a non-public address.
var (
	ErrNotAbsolute = &Refusal{"url must be an absolute URL, such as https://hooks.example.com/reftrack"}
	ErrScheme      = &Refusal{"url must begin with https:// (a server in development also takes http://)"}
	ErrUserinfo    = &Refusal{"url must not hold a user name or password"}
	ErrPort        = &Refusal{"url's port must be between 1 and 65535"}
	ErrIPLiteral   = &Refusal{"url must name its host, not an IP address (a server in development also takes loopback addresses)"}
	ErrUnresolved  = &Refusal{"url's host does not resolve: check its name"}
)

// Policy says which destinations are allowed. The zero value is the production policy with the default
// resolver.
type Policy struct {
	Development bool          // also http:// and loopback addresses
	Resolver    *net.Resolver // nil: net.DefaultResolver (tests inject one)
}

// refuse is a refusal for kind (a Refusal, or ErrNotPublic), with the reason for logs.
func refuse(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))
}

func (p Policy) resolver() *net.Resolver {
	if p.Resolver != nil {
		return p.Resolver
	}
	return net.DefaultResolver
}

// CheckURL is the registration-time check of a webhook URL: absolute, https (also http in development),
// a host, no userinfo (credentials in the URL would be logged and shown back), a port in range if any.
//
// In production the host must be a name, not an IP literal: the product rule asks for a host name, and a
// public server with a certificate for a bare IP is rare enough that a literal is more likely a probe.
// Literals are still checked with Allowed first, so the reason logged says what the address is. In
// development a literal is allowed when Allowed is (e.g. http://127.0.0.1:8080).
//
// A name is resolved and refused if any of its addresses is not allowed (the connection may use any of
// them) or if it does not resolve. A lookup failure is a refusal too (the URL cannot be used as it
// stands); the *net.DNSError stays in the chain for a caller that wants to tell a temporary failure
// apart. Only the caller's own cancellation is returned without ErrNotPublic.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return refuse(ErrNotAbsolute, "not a URL")
	}
	if !u.IsAbs() || u.Opaque != "" {
		return refuse(ErrNotAbsolute, "not an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.Development:
	default:
		return refuse(ErrScheme, "scheme %q", u.Scheme)
	}
	if u.User != nil {
		return refuse(ErrUserinfo, "userinfo in URL")
	}
	host := u.Hostname()
	if host == "" {
		return refuse(ErrNotAbsolute, "no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return refuse(ErrPort, "port %q", port)
		}
	}

	if ip, err := netip.ParseAddr(host); err == nil {
		if !p.Allowed(ip) {
			return refuse(ErrNotPublic, "address %s", ip)
		}
		if !p.Development {
			return refuse(ErrIPLiteral, "IP address %s instead of a host name", ip)
		}
		return nil
	}

	addrs, err := p.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("egress: resolving %s: %w", host, err)
		}
		return fmt.Errorf("%w: %s does not resolve: %w", ErrUnresolved, host, err)
	}
	if len(addrs) == 0 {
		return refuse(ErrUnresolved, "%s does not resolve", host)
	}
	for _, ip := range addrs {
		if !p.Allowed(ip) {
			return refuse(ErrNotPublic, "%s resolves to %s", host, ip)
		}
	}
	return nil
}

// refused are the ranges not covered by netip's predicates that could still reach us or something
// internal. Documentation ranges (192.0.2.0/24, 2001:db8::/32, ...) are not here: nothing answers there.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network": 0.x.x.x reaches the local host on Linux
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (carrier NAT); clouds and VPNs use it internally, never public
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking; used internally (e.g. fake-IP proxies), never public
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, includes the broadcast 255.255.255.255
	netip.MustParsePrefix("::/96"),          // IPv4-compatible IPv6 (deprecated): some stacks route it to the embedded IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64: translates to addresses of our own network
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated predecessor of fc00::/7)
}

// nat64 is the well-known NAT64 prefix: a translator sends it on to the IPv4 address in its last 32
// bits, so that address is what is checked (refusing the prefix would refuse every IPv4-only brand on
// an IPv6-only network with DNS64).
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Allowed is the address rule, applied to resolved addresses and to the address each connection is
// made to. IPv4-mapped IPv6 (::ffff:10.0.0.1) is unmapped first, as the kernel would connect to the
// IPv4 address. Refused: unspecified (0.0.0.0, ::), loopback (allowed in development), private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local unicast (169.254/16 with the metadata service,
// fe80::/10), all multicast (224/4, ff00::/8, which includes link- and interface-local), and the
// ranges in refused above.
func (p Policy) Allowed(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.Unmap().WithZone("")
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	if ip.IsLoopback() {
		return p.Development
	}
	if ip.IsUnspecified() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return false
	}
	for _, r := range refused {
		if r.Contains(ip) {
			return false
		}
	}
	return true
}

// control runs after the socket is made and before it connects, with the address chosen by the dialer
// after resolution: checking here rather than the name is what defeats DNS rebinding.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refuse(ErrNotPublic, "dial %s %q: not an IP address", network, address)
	}
	if !p.Allowed(ap.Addr()) {
		return refuse(ErrNotPublic, "dial %s %s", network, ap)
	}
	return nil
}

// Client is an HTTP client for deliveries. Make one and reuse it: it holds the connection pool.
//
//   - Every connection is checked by the dialer (control), so a name that resolved to a public address
//     at registration cannot reach the internal network later.
//   - No proxy, not even from the environment: through a proxy the dialer would check the proxy's
//     address, not the brand's.
//   - Redirects are not followed: the 3xx response is returned as is (a failure for the caller), since
//     following it would send the delivery somewhere the brand did not register.
//   - timeout bounds the whole delivery (connect, TLS, headers, body); the transport limits within it
//     end a stuck stage early.
func (p Policy) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Resolver:  p.Resolver, // nil is the default resolver
		Control:   p.control,
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    min(10*time.Second, timeout),
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    16, // as many as may be open: a busy endpoint keeps its connections
		MaxConnsPerHost:        16, // one slow brand cannot take every socket
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
