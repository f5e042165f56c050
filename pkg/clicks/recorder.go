package clicks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
)

// Click batching: one writer, batches of up to MaxBatch clicks. Measured on the reference machine
// (docs/performance.md), one writer beats several: its batches grow larger under load and concurrent
// batch inserts into the same indexes only contend with each other.
const (
	Writers  = 1
	MaxBatch = 128
)

// Recorder records clicks in batches: concurrent clicks are written by one statement and one commit, so
// the click route's throughput is not bounded by the database's commit rate. Every click is answered
// only after the statement holding it has committed: nothing acknowledged can be lost. Batches form
// naturally: a writer takes whatever is queued when it becomes free, so a lone click waits for nobody.
type Recorder struct {
	db       *sqlx.DB
	log      *slog.Logger
	queue    chan *job
	maxBatch int
	wg       sync.WaitGroup
	once     sync.Once
	observe  func(size int, took time.Duration)
}

type job struct {
	in      Input
	aff     string
	clickID string
	visitor []byte
	ip      *string
	done    chan outcome
}

type outcome struct {
	res Result
	err error
}

// NewRecorder starts writers concurrent batch writers of up to maxBatch clicks each. observe, when not
// nil, learns each batch's size and duration (for metrics).
func NewRecorder(db *sqlx.DB, log *slog.Logger, writers, maxBatch int, observe func(size int, took time.Duration)) *Recorder {
	r := &Recorder{db: db, log: log, queue: make(chan *job, writers*maxBatch), maxBatch: maxBatch, observe: observe}
	for range writers {
		r.wg.Add(1)
		go r.write()
	}
	return r
}

// conn is a writer's own connection with the batch statement prepared on it. Postgres would otherwise
// re-plan the statement for every batch (its custom plans win on cost estimates, but planning this
// statement costs more than running it), so the connection uses the generic plan.
type conn struct {
	c    *sqlx.Conn
	stmt *sqlx.Stmt
}

func (r *Recorder) connect(ctx context.Context) (*conn, error) {
	c, err := r.db.Connx(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		c.Close()
		return nil, err
	}
	stmt, err := c.PreparexContext(ctx, batchQuery)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("prepare the click statement: %w", err)
	}
	return &conn{c: c, stmt: stmt}, nil
}

func (c *conn) close() {
	c.stmt.Close()
	c.c.Close()
}

// Close stops the writers once every queued click is written. Call it after the HTTP server stopped.
func (r *Recorder) Close() {
	r.once.Do(func() {
		close(r.queue)
		r.wg.Wait()
	})
}

// Record stores a click, or returns the visitor's click on the same link from the last RepeatWindow, in
// the next batch. The link's state is read by the statement that records, so a link turned off records
// nothing from that moment.
func (r *Recorder) Record(ctx context.Context, in Input) (Result, error) {
	j, err := newJob(in)
	if err != nil {
		return Result{}, err
	}
	select {
	case r.queue <- j:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	// Once queued the click will be written; wait for it even if the client goes away, so the answer
	// matches what was stored.
	o := <-j.done
	return o.res, o.err
}

// newJob checks a click's landing URL and gives it its click id and visitor hash.
func newJob(in Input) (*job, error) {
	aff, err := Aff(in.AffiliateURL)
	if err != nil {
		return nil, err
	}
	clickID, err := NewClickID()
	if err != nil {
		return nil, err
	}
	visitor := sha256.Sum256([]byte(in.IP + "\x00" + in.UserAgent))
	j := &job{in: in, aff: aff, clickID: clickID, visitor: visitor[:], done: make(chan outcome, 1)}
	if net.ParseIP(in.IP) != nil {
		j.ip = &in.IP
	}
	return j, nil
}

func (r *Recorder) write() {
	defer r.wg.Done()
	var c *conn
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	for first := range r.queue {
		batch := []*job{first}
	fill:
		for len(batch) < r.maxBatch {
			select {
			case j, ok := <-r.queue:
				if !ok {
					break fill
				}
				batch = append(batch, j)
			default:
				break fill
			}
		}
		start := time.Now()
		c = r.flush(c, batch)
		if r.observe != nil {
			r.observe(len(batch), time.Since(start))
		}
	}
}

// flush writes a batch on c (connecting first when c is nil) and returns the connection to use next, nil
// after a failure so the next batch starts on a fresh one. If a batch fails, each click is retried
// alone, so that one bad click cannot fail the others.
func (r *Recorder) flush(c *conn, batch []*job) *conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var (
		results []outcome
		err     error
	)
	if c == nil {
		c, err = r.connect(ctx)
	}
	if err == nil {
		results, err = r.exec(ctx, c.stmt, batch)
	}
	if err != nil {
		if c != nil {
			c.close()
			c = nil
		}
		if len(batch) > 1 {
			r.log.Warn("click batch failed; writing its clicks one by one", "clicks", len(batch), "err", err)
			for _, j := range batch {
				c = r.flush(c, []*job{j})
			}
			return c
		}
	}
	for i, j := range batch {
		if err != nil {
			j.done <- outcome{err: err}
			continue
		}
		j.done <- results[i]
	}
	return c
}

type batchRow struct {
	Ord              int64   `db:"ord"`
	Found            bool    `db:"found"`
	Enabled          bool    `db:"enabled"`
	PartnerID        *int64  `db:"partner_id"`
	ProgramID        *int64  `db:"program_id"`
	CookieWindowDays *int    `db:"cookie_window_days"`
	OriginOK         bool    `db:"origin_ok"`
	Suspended        bool    `db:"suspended"`
	NewID            *int64  `db:"new_id"`
	OldID            *int64  `db:"old_id"`
	OldClick         *string `db:"old_click"`
}

// batchQuery does for a whole batch what Record's statement does for one click. Inputs arrive as
// parallel arrays; ord ties each output row to its input. Two clicks of one visitor on one link in the
// same batch are both new (a repeat within milliseconds; Record has the same race).
var batchQuery = `
WITH input AS (
	SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::bool[], $5::text[], $6::text[], $7::text[], $8::text[],
		$9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
		$18::inet[], $19::text[], $20::text[], $21::text[], $22::text[], $23::bool[])
	WITH ORDINALITY AS t(aff, visitor, origin, is_test, click_id, affiliate_url, session_id, page_url, page_title,
		referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
		screen_resolution, viewport_size, language, timezone, is_bot, ord)
), link AS (
	SELECT i.*, l.id AS link_id, l.enabled, l.partner_id, l.program_id, p.cookie_window_days,
		COALESCE(i.origin = '' OR i.origin = ANY(p.allowed_origins), false) AS origin_ok,
		COALESCE(` + accounts.ProgramSuspendedSQL("p") + `, false) AS suspended
	FROM input i JOIN referral_links l ON l.short_link = i.aff LEFT JOIN programs p ON p.id = l.program_id
), ok AS (
	SELECT * FROM link WHERE enabled AND origin_ok AND NOT suspended AND partner_id IS NOT NULL AND program_id IS NOT NULL
), prev AS (
	SELECT DISTINCT ON (ok.ord) ok.ord, c.id, c.click_id FROM ok
	JOIN clicks c ON c.link_id = ok.link_id AND c.visitor_hash = ok.visitor AND c.is_test = ok.is_test
		AND c.click_timestamp > now() - $24 * interval '1 second'
	ORDER BY ok.ord, c.click_timestamp DESC
), ins AS (
	INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url, session_id, page_url, page_title,
		referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
		visitor_hash, screen_resolution, viewport_size, language, timezone, is_test, is_bot)
	SELECT click_id, program_id, link_id, partner_id, affiliate_url, session_id, page_url, page_title,
		referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
		visitor, screen_resolution, viewport_size, language, timezone, is_test, is_bot
	FROM ok WHERE NOT EXISTS (SELECT 1 FROM prev WHERE prev.ord = ok.ord)
	RETURNING id, click_id
)
SELECT i.ord, (link.link_id IS NOT NULL) AS found, COALESCE(link.enabled, false) AS enabled, link.partner_id,
	link.program_id, link.cookie_window_days, COALESCE(link.origin_ok, false) AS origin_ok,
	COALESCE(link.suspended, false) AS suspended,
	ins.id AS new_id, prev.id AS old_id, prev.click_id AS old_click
FROM input i
LEFT JOIN link ON link.ord = i.ord
LEFT JOIN ins ON ins.click_id = i.click_id
LEFT JOIN prev ON prev.ord = i.ord`

func (r *Recorder) exec(ctx context.Context, stmt *sqlx.Stmt, batch []*job) ([]outcome, error) {
	n := len(batch)
	// One array per column of batchQuery's input, in its order ($1 … $23).
	var (
		aff, origin, clickID = make([]string, n), make([]string, n), make([]string, n)
		visitor              = make([][]byte, n)
		test, bot            = make([]bool, n), make([]bool, n)
		ip                   = make([]*string, n)
		// Nullable texts: affiliate_url, session_id … user_agent ($6–$17), then screen_resolution …
		// timezone ($19–$22).
		head, tail = make([][]*string, 12), make([][]*string, 4)
	)
	for c := range head {
		head[c] = make([]*string, n)
	}
	for c := range tail {
		tail[c] = make([]*string, n)
	}
	for i, j := range batch {
		in := j.in
		aff[i], visitor[i], origin[i], test[i], clickID[i], ip[i], bot[i] = j.aff, j.visitor, in.Origin, in.Test, j.clickID, j.ip, in.Device.Bot
		for c, v := range []string{in.AffiliateURL, in.SessionID, in.PageURL, in.PageTitle, in.ReferrerURL, in.Geo.Country,
			in.Geo.Region, in.Geo.City, in.Device.Type, in.Device.OS, in.Device.Browser, in.UserAgent} {
			head[c][i] = nullText(v)
		}
		for c, v := range []string{in.ScreenRes, in.Viewport, in.Language, in.Timezone} {
			tail[c][i] = nullText(v)
		}
	}
	args := []any{pq.Array(aff), pq.ByteaArray(visitor), pq.Array(origin), pq.BoolArray(test), pq.Array(clickID)}
	for _, col := range head {
		args = append(args, pq.Array(col))
	}
	args = append(args, pq.Array(ip))
	for _, col := range tail {
		args = append(args, pq.Array(col))
	}
	args = append(args, pq.BoolArray(bot), int64(RepeatWindow/time.Second))

	var rows []batchRow
	if err := stmt.SelectContext(ctx, &rows, args...); err != nil {
		return nil, fmt.Errorf("record clicks: %w", err)
	}
	if len(rows) != n {
		return nil, fmt.Errorf("record clicks: %d results for %d clicks", len(rows), n)
	}
	out := make([]outcome, n)
	for _, row := range rows {
		i := int(row.Ord) - 1
		j := batch[i]
		out[i] = toOutcome(row, j)
	}
	return out, nil
}

func toOutcome(row batchRow, j *job) outcome {
	switch {
	case !row.Found:
		return outcome{err: ErrLinkNotFound}
	case row.PartnerID == nil || row.ProgramID == nil || row.CookieWindowDays == nil:
		return outcome{err: ErrLinkMisconfigured}
	case row.Suspended:
		return outcome{err: accounts.ErrSuspended}
	case !row.OriginOK:
		return outcome{err: &LinkError{Err: ErrOriginNotAllowed, Origin: j.in.Origin}}
	case !row.Enabled:
		return outcome{err: ErrLinkDisabled}
	}
	res := Result{ProgramID: *row.ProgramID, PartnerID: *row.PartnerID, ShortLink: j.aff, CookieWindowDays: *row.CookieWindowDays}
	switch {
	case row.NewID != nil:
		res.ID, res.ClickID, res.Created = *row.NewID, j.clickID, true
	case row.OldID != nil:
		res.ID, res.ClickID = *row.OldID, *row.OldClick
	default:
		return outcome{err: errors.New("record click: neither recorded nor found")}
	}
	return outcome{res: res}
}

// nullText is a text column value: NULL for "", clipped otherwise.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	s = clip(s)
	return &s
}
