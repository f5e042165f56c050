package clicks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/platform/batch"
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

// batchQuery records a whole batch through the database function clicks_record (pkg/clicks/sql/clicks_record.sql),
// whose plan PostgreSQL keeps per connection: planning the statement costs more than running it. Inputs
// are parallel arrays (an empty text for none); ord ties each output row to its input. Two clicks of one visitor on
// one link in the same batch are both new (a repeat within milliseconds).
const batchQuery = `SELECT * FROM clicks_record($1::text[], $2::bytea[], $3::text[], $4::boolean[], $5::text[],
	$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
	$15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::text[],
	$23::boolean[], $24::bigint)`

func (r *Recorder) exec(ctx context.Context, batch []*job) ([]outcome, error) {
	n := len(batch)
	// One array per column of clicks_record's input, in its order ($1 … $23).
	var (
		aff, origin, clickID, ip = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		visitor                  = make([][]byte, n)
		test, bot                = make([]bool, n), make([]bool, n)
		// Texts that may be empty: affiliate_url, session_id … user_agent ($6–$17), then screen_resolution …
		// timezone ($19–$22).
		head, tail = make([]pq.StringArray, 12), make([]pq.StringArray, 4)
	)
	for c := range head {
		head[c] = make(pq.StringArray, n)
	}
	for c := range tail {
		tail[c] = make(pq.StringArray, n)
	}
	for i, j := range batch {
		in := j.in
		aff[i], visitor[i], origin[i], test[i], clickID[i], ip[i], bot[i] = j.aff, j.visitor, in.Origin, in.Test, j.clickID, j.ip, in.Device.Bot
		for c, v := range []string{in.AffiliateURL, in.SessionID, in.PageURL, in.PageTitle, in.ReferrerURL, in.Geo.Country,
			in.Geo.Region, in.Geo.City, in.Device.Type, in.Device.OS, in.Device.Browser, in.UserAgent} {
			head[c][i] = clip(v)
		}
		for c, v := range []string{in.ScreenRes, in.Viewport, in.Language, in.Timezone} {
			tail[c][i] = clip(v)
		}
	}
	args := make([]any, 0, 24)
	args = append(args, pq.StringArray(aff), pq.ByteaArray(visitor), pq.StringArray(origin), pq.BoolArray(test), pq.StringArray(clickID))
	for _, col := range head {
		args = append(args, col)
	}
	args = append(args, pq.StringArray(ip))
	for _, col := range tail {
		args = append(args, col)
	}
	args = append(args, pq.BoolArray(bot), int64(RepeatWindow/time.Second))

	var rows []batchRow
	if err := r.db.SelectContext(ctx, &rows, batchQuery, args...); err != nil {
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
