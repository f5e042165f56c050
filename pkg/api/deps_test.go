package api

import (
	"context"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/api/webhookdata"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
	"github.com/reftrack/reftrack/pkg/portalpage"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/useragent"
	outbound "github.com/reftrack/reftrack/pkg/webhooks"
	"github.com/reftrack/reftrack/pkg/webui"
	"github.com/reftrack/reftrack/tracker"
)

// completeDeps has every collaborator, as values that are never used: check looks only at their presence.
func completeDeps() Deps {
	db, logger := &sqlx.DB{}, slog.New(slog.NewTextHandler(io.Discard, nil))
	return Deps{
		DB: db, Logger: logger, Clock: time.Now, Limiter: &ratelimit.Limiter{},
		Login: &identity.Login{Verifier: &identity.Verifier{}}, Metrics: &metrics.Metrics{},
		Tracker: tracker.Script{Body: []byte("//")}, Dashboard: dashboard.Assets{Assets: webui.Assets{Files: map[string]webui.Asset{}}},
		Portal:  portalpage.Assets{Assets: webui.Assets{Files: map[string]webui.Asset{}}},
		Devices: &useragent.Parser{}, Clicks: &clicks.Recorder{}, Leads: &leads.Recorder{}, Sales: &sales.Recorder{},
		Refunds: &sales.RefundRecorder{}, Keys: &apikeys.Lookups{}, Origins: &origins.Cache{},
		Stripe: &payments.Stripe{DB: db, Log: logger, Now: time.Now}, DNS: net.DefaultResolver, Spec: &openapi3.T{},
		Webhooks: &outbound.Store{Shape: webhookdata.Data},
	}
}

// New refuses a Deps with any one collaborator missing, naming it; only the fields documented as
// optional may be left out. A field added to Deps is a collaborator until listed in optionalDeps.
func TestNewNamesAMissingDependency(t *testing.T) {
	t.Parallel()
	complete := completeDeps()
	if err := complete.check(); err != nil {
		t.Fatalf("complete Deps: %v", err)
	}
	typ := reflect.TypeFor[Deps]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := completeDeps()
			reflect.ValueOf(&d).Elem().Field(i).SetZero()
			_, err := New(context.Background(), d)
			if slices.Contains(optionalDeps, name) {
				if err := d.check(); err != nil {
					t.Errorf("without the optional %s: %v", name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "missing dependencies ["+name+"]") {
				t.Errorf("New without %s: %v, want it named as the missing dependency", name, err)
			}
		})
	}
	// What a collaborator needs of its own to be usable counts as the collaborator.
	for name, broken := range map[string]func(*Deps){
		"Login":  func(d *Deps) { d.Login = &identity.Login{} },
		"Stripe": func(d *Deps) { d.Stripe = &payments.Stripe{DB: d.DB, Log: d.Logger} },
		// Without a Shape, test events' samples could not be made.
		"Webhooks": func(d *Deps) { d.Webhooks = &outbound.Store{} },
	} {
		d := completeDeps()
		broken(&d)
		if _, err := New(context.Background(), d); err == nil || !strings.Contains(err.Error(), "["+name+"]") {
			t.Errorf("New with an unusable %s: %v, want it named", name, err)
		}
	}
	// Every missing one is named at once.
	if _, err := New(context.Background(), Deps{Config: complete.Config}); err == nil ||
		!strings.Contains(err.Error(), "[Clicks Clock DB DNS Dashboard Devices Keys Leads Limiter Logger Login Metrics Origins Portal Refunds Sales Spec Stripe Tracker Webhooks]") {
		t.Errorf("New with nothing: %v", err)
	}
}
