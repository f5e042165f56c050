package programs

import (
	"context"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// PartnersByEnrollment reads, in one query, the partners of the enrollments (partner_programs rows) ids,
// each as Partners shows it in its program, with its stats (programs_partner_stats), in no particular
// order; ids that name no enrollment are left out. The webhook worker reads a batch of partner events'
// partners with it: a partner.* event names the enrollment, the partner in one program.
func PartnersByEnrollment(ctx context.Context, q sqlx.QueryerContext, ids []int64) ([]Partner, error) {
	var rows []struct {
		Partner
		Clicks int64 `db:"clicks"`
		Leads  int64 `db:"leads"`
		Sales  int64 `db:"sales"`
	}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT e.*, COALESCE(st.clicks, 0) AS clicks, COALESCE(st.leads, 0) AS leads,
			COALESCE(st.sales, 0) AS sales
		FROM (`+partnerQuery+` WHERE pp.id = ANY ($1)) e
		LEFT JOIN LATERAL programs_partner_stats(e.program_id, ARRAY[e.id]) st ON true`, pq.Array(ids))
	if err != nil {
		return nil, err
	}
	out := make([]Partner, len(rows))
	for i, r := range rows {
		out[i] = r.Partner
		out[i].Stats = Stats{Clicks: r.Clicks, Leads: r.Leads, Sales: r.Sales}
	}
	return out, nil
}

// ReadLinks reads the referral links of ids as GetLink shows them, in one query, in no particular order;
// ids that name no link are left out. The webhook worker reads a batch of link events' links with it.
func ReadLinks(ctx context.Context, q sqlx.QueryerContext, ids []int64) ([]Link, error) {
	out := []Link{}
	err := sqlx.SelectContext(ctx, q, &out, linkQuery+` WHERE l.id = ANY ($1)`, pq.Array(ids))
	return out, err
}
