package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/api/web"
	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/platform/config"
)

// mailEvery is how often the courier looks for mail when nothing woke it (a message whose sending failed,
// another replica's mail, one written while it was busy).
const mailEvery = 5 * time.Second

// newMail chooses where mail goes: through SMTP_URL, or, in development without it, into the mailbox shown
// at /dev/mail (returned; nil with SMTP). Production requires SMTP_URL (config).
func newMail(cfg config.Config, clock func() time.Time) (mail.Sender, *mail.Mailbox, error) {
	if cfg.SMTPURL != "" {
		s, err := mail.NewSMTP(cfg.SMTPURL, cfg.MailFrom)
		return s, nil, err
	}
	box := mail.NewMailbox(cfg.MailFrom, web.MailboxLimit, clock)
	return box, box, nil
}

// runMail sends the outbox's mail in the background: at once when woken (wake), else every mailEvery,
// until the returned stop is called (it waits for a pass in progress). Replicas may all run it: each
// message is leased by the one sending it.
func runMail(ctx context.Context, courier *mail.Courier, logger *slog.Logger) (wake func(), stop func()) {
	woken := make(chan struct{}, 1)
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(mailEvery)
		defer t.Stop()
		for {
			if err := courier.SendAll(loopCtx); err != nil && loopCtx.Err() == nil {
				logger.WarnContext(loopCtx, "mail not sent", "err", err)
			}
			select {
			case <-loopCtx.Done():
				return
			case <-woken:
			case <-t.C:
			}
		}
	}()
	wake = func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}
	return wake, func() { cancel(); <-done }
}

// newCourier is the outbox's courier through sender.
func newCourier(pool *sqlx.DB, sender mail.Sender, logger *slog.Logger, clock func() time.Time) *mail.Courier {
	return &mail.Courier{DB: pool, Sender: sender, Now: clock, Log: logger}
}
