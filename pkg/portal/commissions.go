package portal

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/ledger"
)

// Commission is a commission as its partner sees it: the ledger's, with the customer masked.
type Commission struct {
	ledger.Commission
	// Customer is the customer's email or key, masked ("a***@example.com", "cus_***42"); "" when the
	// sale's customer has neither.
	Customer string
}

// CommissionPage is one page of the partner's commissions, newest first.
type CommissionPage struct {
	Commissions []Commission
	NextCursor  string
}

// Commissions is a page of the partner's commissions in the program (status, cursor and limit as the
// brand's list takes them).
func Commissions(ctx context.Context, db *sqlx.DB, pr Program, status, cursor string, limit int, now time.Time) (CommissionPage, error) {
	page, err := ledger.PartnerCommissions(ctx, db, pr.ID, pr.PartnerID, ledger.Filter{Status: status, Cursor: cursor, Limit: limit}, now)
	if err != nil {
		return CommissionPage{}, err
	}
	ids := make([]int64, len(page.Commissions))
	for i, c := range page.Commissions {
		ids[i] = c.ID
	}
	var who []struct {
		ID    int64   `db:"id"`
		Key   *string `db:"customer_key"`
		Email *string `db:"email"`
	}
	if err := db.SelectContext(ctx, &who, `SELECT c.id, cu.customer_key, cu.email FROM commissions c
		JOIN sales s ON s.id = c.sale_id JOIN customers cu ON cu.id = s.customer_id WHERE c.id = ANY ($1)`, pq.Array(ids)); err != nil {
		return CommissionPage{}, err
	}
	masked := make(map[int64]string, len(who))
	for _, w := range who {
		switch {
		case w.Email != nil && *w.Email != "":
			masked[w.ID] = MaskEmail(*w.Email)
		case w.Key != nil:
			masked[w.ID] = MaskKey(*w.Key)
		}
	}
	out := CommissionPage{Commissions: make([]Commission, len(page.Commissions)), NextCursor: page.NextCursor}
	for i, c := range page.Commissions {
		out.Commissions[i] = Commission{Commission: c, Customer: masked[c.ID]}
	}
	return out, nil
}

// MaskEmail keeps an email's first character and its domain: "a***@example.com".
func MaskEmail(email string) string {
	at := strings.LastIndexByte(email, '@')
	if at < 1 {
		return MaskKey(email)
	}
	r, _ := utf8.DecodeRuneInString(email)
	return string(r) + "***" + email[at:]
}

// MaskKey keeps a customer key's type prefix (2 or 3 lower-case letters and "_", as processors write
// them: "cus_", "pi_") and its last two characters: "cus_***42". A longer prefix could be a name ("john_smith_85"
// shows as "***85"), so it is hidden with the rest; a key too short to keep its end shows as "***".
func MaskKey(key string) string {
	prefix := ""
	if i := strings.IndexByte(key, '_'); i >= 2 && i <= 3 && strings.Trim(key[:i], "abcdefghijklmnopqrstuvwxyz") == "" {
		prefix = key[:i+1]
	}
	runes := []rune(key[len(prefix):])
	if len(runes) < 5 {
		return prefix + "***"
	}
	return prefix + "***" + string(runes[len(runes)-2:])
}
