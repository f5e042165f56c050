package clicks

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	clickssql "github.com/reftrack/reftrack/pkg/clicks/sql"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/platform/batch"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
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
	db      *sqlx.DB
	log     *slog.Logger
	queue   *batch.Queue[*job]
	observe func(size int, took time.Duration)
}

type job struct {
	in      Input
	aff     string
	clickID string
	visitor []byte
	ip      string
	done    chan outcome
}

type outcome struct {
	res Result
	err error
}

// NewRecorder starts writers concurrent batch writers of up to maxBatch clicks each. observe, when not
// nil, learns each batch's size and duration (for metrics).
func NewRecorder(db *sqlx.DB, log *slog.Logger, writers, maxBatch int, observe func(size int, took time.Duration)) *Recorder {
	r := &Recorder{db: db, log: log, observe: observe}
	r.queue = batch.Start(writers, maxBatch, r.write)
	return r
}

// Close stops the writers once every queued click is written. Call it after the HTTP server stopped.
func (r *Recorder) Close() { r.queue.Close() }

// Record stores a click, or returns the visitor's click on the same link from the last RepeatWindow, in
// the next batch. The link's state is read by the statement that records, so a link turned off records
// nothing from that moment.
func (r *Recorder) Record(ctx context.Context, in Input) (Result, error) {
	j, err := newJob(in)
	if err != nil {
		return Result{}, err
	}
	if err := r.queue.Put(ctx, j); err != nil {
		return Result{}, err
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
	// The wall clock, not an injected one: the month must be the database's, which makes the partitions
	// and stamps click_timestamp with its own now().
	clickID, err := NewClickID(time.Now())
	if err != nil {
		return nil, err
	}
	visitor := sha256.Sum256([]byte(in.IP + "\x00" + in.UserAgent))
	j := &job{in: in, aff: aff, clickID: clickID, visitor: visitor[:], done: make(chan outcome, 1)}
	if net.ParseIP(in.IP) != nil {
		j.ip = in.IP
	}
	return j, nil
}

func (r *Recorder) write(next func() ([]*job, bool)) {
	for {
		batch, ok := next()
		if !ok {
			return
		}
		start := time.Now()
		r.flush(batch)
		if r.observe != nil {
			r.observe(len(batch), time.Since(start))
		}
	}
}

// flush writes a batch and answers its clicks. If a batch fails, each click is retried alone, so that
// one bad click cannot fail the others.
func (r *Recorder) flush(batch []*job) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	results, err := r.exec(ctx, batch)
	if err != nil && len(batch) > 1 {
		r.log.Warn("click batch failed; writing its clicks one by one", "clicks", len(batch), "err", err)
		for _, j := range batch {
			r.flush([]*job{j})
		}
		return
	}
	for i, j := range batch {
		if err != nil {
			j.done <- outcome{err: err}
			continue
		}
		j.done <- results[i]
	}
}

// recordCall records a whole batch through the database function clicks_record
// (pkg/clicks/sql/clicks_record.sql), whose plan PostgreSQL keeps per connection: planning the
// statement costs more than running it. The function decides each click's outcome, in the click's one
// order of rules; ord ties each output row to its input. Two clicks of one visitor on one link in the same
// batch are both new (a repeat within milliseconds).
var recordCall = pgcall.New[recordInput, recordFixed](clickssql.Record)

// recordInput is one click as clicks_record takes it; nil is a value not sent.
type recordInput struct {
	Aff          string  `pg:"p_aff"`
	Visitor      []byte  `pg:"p_visitor"`
	Origin       *string `pg:"p_origin"`
	Test         bool    `pg:"p_test"`
	ClickID      string  `pg:"p_click_id"`
	AffiliateURL *string `pg:"p_affiliate_url"`
	SessionID    *string `pg:"p_session_id"`
	PageURL      *string `pg:"p_page_url"`
	PageTitle    *string `pg:"p_page_title"`
	ReferrerURL  *string `pg:"p_referrer_url"`
	GeoCountry   *string `pg:"p_geo_country"`
	GeoRegion    *string `pg:"p_geo_region"`
	GeoCity      *string `pg:"p_geo_city"`
	DeviceType   *string `pg:"p_device_type"`
	DeviceOS     *string `pg:"p_device_os"`
	Browser      *string `pg:"p_browser_name"`
	UserAgent    *string `pg:"p_user_agent"`
	IP           *string `pg:"p_ip,inet"`
	ScreenRes    *string `pg:"p_screen_resolution"`
	Viewport     *string `pg:"p_viewport_size"`
	Language     *string `pg:"p_language"`
	Timezone     *string `pg:"p_timezone"`
	Bot          bool    `pg:"p_bot"`
	// What the click counts for, if stored (pkg/counting).
	CountClicks    int64 `pg:"p_count_clicks"`
	CountBotClicks int64 `pg:"p_count_bot_clicks"`
}

type recordFixed struct {
	RepeatSeconds int64 `pg:"p_repeat_seconds"`
}

// recordInputOf is a job's click as clicks_record takes it: texts clipped, empty ones not sent.
func recordInputOf(j *job) recordInput {
	in := j.in
	counts := counting.Click(in.Test, in.Device.Bot)
	return recordInput{
		Aff: j.aff, Visitor: j.visitor, Origin: text(in.Origin), Test: in.Test, ClickID: j.clickID,
		AffiliateURL: text(in.AffiliateURL), SessionID: text(in.SessionID), PageURL: text(in.PageURL),
		PageTitle: text(in.PageTitle), ReferrerURL: text(in.ReferrerURL), GeoCountry: text(in.Geo.Country),
		GeoRegion: text(in.Geo.Region), GeoCity: text(in.Geo.City), DeviceType: text(in.Device.Type),
		DeviceOS: text(in.Device.OS), Browser: text(in.Device.Browser), UserAgent: text(in.UserAgent), IP: text(j.ip),
		ScreenRes: text(in.ScreenRes), Viewport: text(in.Viewport), Language: text(in.Language), Timezone: text(in.Timezone),
		Bot: in.Device.Bot, CountClicks: counts.Clicks, CountBotClicks: counts.BotClicks,
	}
}

// text is s clipped, or nil when empty.
func text(s string) *string {
	if s == "" {
		return nil
	}
	s = clip(s)
	return &s
}

// recordRow is clicks_record's answer for one click.
type recordRow struct {
	Ord              int64   `db:"ord"`
	Outcome          string  `db:"outcome"`
	PartnerID        *int64  `db:"partner_id"`
	ProgramID        *int64  `db:"program_id"`
	CookieWindowDays *int    `db:"cookie_window_days"`
	ID               *int64  `db:"id"`
	ClickID          *string `db:"click_id"`
}

func (r *Recorder) exec(ctx context.Context, batch []*job) ([]outcome, error) {
	n := len(batch)
	in := make([]recordInput, n)
	for i, j := range batch {
		in[i] = recordInputOf(j)
	}
	var rows []recordRow
	if err := recordCall.Select(ctx, r.db, &rows, in, recordFixed{RepeatSeconds: int64(RepeatWindow / time.Second)}); err != nil {
		return nil, fmt.Errorf("record clicks: %w", err)
	}
	if len(rows) != n {
		return nil, fmt.Errorf("record clicks: %d results for %d clicks", len(rows), n)
	}
	out := make([]outcome, n)
	for _, row := range rows {
		i := int(row.Ord) - 1
		out[i] = toOutcome(row, batch[i])
	}
	return out, nil
}

// refusals are the errors of clicks_record's outcomes that record nothing (the function decides them).
var refusals = map[string]func(j *job) error{
	"link_not_found":     func(*job) error { return ErrLinkNotFound },
	"link_misconfigured": func(*job) error { return ErrLinkMisconfigured },
	"owner_suspended":    func(*job) error { return accounts.ErrSuspended },
	"origin_not_allowed": func(j *job) error { return &LinkError{Err: ErrOriginNotAllowed, Origin: j.in.Origin} },
	"link_disabled":      func(*job) error { return ErrLinkDisabled },
}

func toOutcome(row recordRow, j *job) outcome {
	if refuse, ok := refusals[row.Outcome]; ok {
		return outcome{err: refuse(j)}
	}
	if (row.Outcome != "recorded" && row.Outcome != "repeated") || row.ID == nil || row.ClickID == nil ||
		row.PartnerID == nil || row.ProgramID == nil || row.CookieWindowDays == nil {
		return outcome{err: fmt.Errorf("record click: unexpected answer %+v", row)}
	}
	return outcome{res: Result{
		ID: *row.ID, ClickID: *row.ClickID, Created: row.Outcome == "recorded",
		ProgramID: *row.ProgramID, PartnerID: *row.PartnerID, ShortLink: j.aff, CookieWindowDays: *row.CookieWindowDays,
	}}
}
