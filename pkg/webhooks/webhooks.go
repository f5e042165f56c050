// Package webhooks tells a brand's systems what happened in its program: every lead, sale, refund,
// commission change, payout, partner and link change is an event, delivered to the program's endpoints
// signed by the Standard Webhooks specification (so any of its verifying libraries works).
//
// Durable by construction: the events are written by triggers on the owners' tables (pkg/webhooks/sql),
// in the transaction of the change they describe. A Worker in every replica picks new events up (locked
// FOR UPDATE SKIP LOCKED), renders their data (each resource read from its owner, a query per kind of
// resource for the whole batch, and shaped by the management API's own wire mapping: Shape) and writes
// one pending delivery per enabled endpoint that takes the type; then it claims due deliveries with FOR
// UPDATE SKIP LOCKED in one autocommit statement (so a transaction-pooling PgBouncer is fine), leases
// them, attempts them, and records each attempt; a replica killed mid-attempt leaves a lease that runs
// out, and another replica attempts again with the same webhook-id (at least once; receivers deduplicate
// on it).
//
// It owns the tables webhook_endpoints, webhook_events, webhook_deliveries and webhook_attempts.
package webhooks

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reftrack/reftrack/pkg/pagecursor"
)

// Event types (docs/rules.md#webhooks).
const (
	LeadCreated       = "lead.created"
	SaleCreated       = "sale.created"
	SaleRefunded      = "sale.refunded"
	CommissionCreated = "commission.created"
	CommissionUpdated = "commission.updated"
	PayoutCreated     = "payout.created"
	PayoutPaid        = "payout.paid"
	PayoutFailed      = "payout.failed"
	PartnerCreated    = "partner.created"
	PartnerUpdated    = "partner.updated"
	LinkUpdated       = "link.updated"
)

// EventTypes lists every event type.
var EventTypes = []string{LeadCreated, SaleCreated, SaleRefunded, CommissionCreated, CommissionUpdated, PayoutCreated,
	PayoutPaid, PayoutFailed, PartnerCreated, PartnerUpdated, LinkUpdated}

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// DeliveryStatuses lists the delivery statuses.
var DeliveryStatuses = []string{StatusPending, StatusSucceeded, StatusFailed}

// Limits and times of the rules.
const (
	MaxEndpoints     = 10   // per program
	MaxURL           = 2048 // characters
	MaxDescription   = 500  // characters
	DefaultPageSize  = pagecursor.DefaultSize
	MaxPageSize      = pagecursor.MaxSize
	Timeout          = 15 * time.Second    // one attempt, connection to last byte
	Retention        = 30 * 24 * time.Hour // events, deliveries and attempts are kept this long
	DisableAfter     = 5 * 24 * time.Hour  // an endpoint failing every attempt this long is disabled
	RotationOverlap  = 24 * time.Hour      // a rotated-out secret signs too for this long
	ResponseBodySize = 1024                // bytes of a response kept in the log
	// lease is how long a claimed delivery is a replica's: past it, another attempts again (the first was
	// killed). Longer than an attempt can take.
	lease = Timeout + 45*time.Second
)

// Schedule is the delay before each attempt of a delivery: at once, then after 5 s, 5 min, 30 min, 2 h,
// 5 h, 10 h and 10 h, each ±10 % (jitter). After the last, the delivery has failed.
var Schedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour}

// Reasons an endpoint was disabled.
const (
	ReasonGone    = "the endpoint answered 410 Gone"
	ReasonFailing = "every attempt failed for 5 days"
)

// Errors of this package.
var (
	ErrProgramNotFound  = errors.New("program not found")
	ErrEndpointNotFound = errors.New("webhook endpoint not found")
	ErrDeliveryNotFound = errors.New("webhook delivery not found")
)

// DuplicateURLError refuses a second endpoint of a program with the URL of one it has (409): every event
// would arrive twice.
type DuplicateURLError struct {
	ID  int64 // the endpoint that has the URL
	URL string
}

func (e *DuplicateURLError) Error() string {
	return fmt.Sprintf("Endpoint %d of this program already has this URL: every event would arrive twice. "+
		"Choose its events, or remove it first.", e.ID)
}

// InvalidError refuses an input out of its range (400); Message is the answer's.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }

func invalid(format string, args ...any) error {
	return &InvalidError{Message: fmt.Sprintf(format, args...)}
}

// CheckEventType refuses a type that is not one of EventTypes.
func CheckEventType(t string) error {
	if !slices.Contains(EventTypes, t) {
		return invalid("event type %q is not one of %s", t, strings.Join(EventTypes, ", "))
	}
	return nil
}

// CheckStatus refuses a delivery status that is not one of DeliveryStatuses.
func CheckStatus(s string) error {
	if !slices.Contains(DeliveryStatuses, s) {
		return invalid("status must be one of %s", strings.Join(DeliveryStatuses, ", "))
	}
	return nil
}
