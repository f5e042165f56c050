package programs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// Domain verification: a program proves its domain with a TXT record. Status requests check it, at most
// once a minute per program, and the first match is recorded for good (dns_verified_at).

// TXTResolver looks TXT records up: net.DefaultResolver in the server, a fake in tests.
type TXTResolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// DNSRecord is the TXT record that proves a program's domain.
type DNSRecord struct {
	Name  string // _reftrack.<domain>
	Value string // reftrack-verification=<the program's token>
}

// DNSRecordOf is the record for a domain and a program's token.
func DNSRecordOf(domain, token string) DNSRecord {
	return DNSRecord{Name: "_reftrack." + domain, Value: "reftrack-verification=" + token}
}

// DNSCheckInterval is how often a program's record is looked up while it is unverified.
const DNSCheckInterval = time.Minute

// dnsLookupTimeout bounds one lookup: a slow resolver must not hold a status request.
const dnsLookupTimeout = 2 * time.Second

// DNSStatus is a program's domain verification as a status request sees it.
type DNSStatus struct {
	Verified bool
	Record   DNSRecord
}

// CheckDNS answers the program's domain verification, first looking its record up when the program is
// unverified and was last looked up at least DNSCheckInterval before now (the lookup is claimed in the
// database, so concurrent requests and replicas look up once). A failed lookup (no such name, no
// answer) leaves the program unverified; it is not an error.
func CheckDNS(ctx context.Context, db *sqlx.DB, resolver TXTResolver, programID int64, now time.Time) (DNSStatus, error) {
	var p struct {
		Domain   string       `db:"domain"`
		Token    string       `db:"dns_token"`
		Verified sql.NullTime `db:"dns_verified_at"`
		Claimed  bool         `db:"claimed"`
	}
	// Claim the lookup when one is due; either way read what is stored.
	err := db.GetContext(ctx, &p, `WITH claim AS (
			UPDATE programs SET dns_checked_at = $2
			WHERE id = $1 AND dns_verified_at IS NULL AND (dns_checked_at IS NULL OR dns_checked_at <= $3)
			RETURNING id)
		SELECT domain, dns_token, dns_verified_at, EXISTS (SELECT 1 FROM claim) AS claimed FROM programs WHERE id = $1`,
		programID, now, now.Add(-DNSCheckInterval))
	if errors.Is(err, sql.ErrNoRows) {
		return DNSStatus{}, ErrNotFound
	}
	if err != nil {
		return DNSStatus{}, fmt.Errorf("check dns: %w", err)
	}
	st := DNSStatus{Verified: p.Verified.Valid, Record: DNSRecordOf(p.Domain, p.Token)}
	if !p.Claimed || p.Domain == "" || resolver == nil {
		return st, nil
	}
	lookupCtx, cancel := context.WithTimeout(ctx, dnsLookupTimeout)
	defer cancel()
	values, err := resolver.LookupTXT(lookupCtx, st.Record.Name)
	if err != nil {
		return st, nil // no record yet (or no answer): asked again after the interval
	}
	for _, v := range values {
		if strings.TrimSpace(v) == st.Record.Value {
			if _, err := db.ExecContext(ctx, `UPDATE programs SET dns_verified_at = $2 WHERE id = $1 AND dns_verified_at IS NULL`,
				programID, now); err != nil {
				return DNSStatus{}, fmt.Errorf("record dns verification: %w", err)
			}
			st.Verified = true
			break
		}
	}
	return st, nil
}
