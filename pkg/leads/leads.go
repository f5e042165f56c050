// Package leads records sign-ups. A lead arrives in server mode (the brand's backend, with the program
// key) or browser mode (no key). On a server_required program a browser-mode lead is only provisional:
// it is stored against its click, binds no customer_key and settles when a server-mode lead (or a
// payment webhook) for that click arrives. Settled leads move the customer from visitor to lead.
package leads

import (
	"errors"
)

// Errors, one per documented refusal.
var (
	ErrIdentifierRequired = errors.New("click_id or customer_key is required")
	ErrCustomerNotFound   = errors.New("customer not found")
	ErrOtherProgram       = errors.New("customer does not belong to this program")
	ErrOriginNotAllowed   = errors.New("origin not allowed for this program")
)

// StatusError refuses a lead for a customer already at lead or a later stage.
type StatusError struct{ Status string }

func (e *StatusError) Error() string { return "customer status is " + e.Status }

// Sources of a lead.
const (
	SourceBrowser = "browser"
	SourceServer  = "server"
	SourceWebhook = "webhook"
	SourceCLITest = "cli_test"
)

// Input is one reported lead.
type Input struct {
	// ProgramID is the key's program in server mode; in browser mode the program named by
	// additional_data.program_id, if any (the click's program otherwise).
	ProgramID   int64
	ServerMode  bool
	ClickID     string
	CustomerKey string
	Email       string
	Test        bool
	// Origin is the browser's Origin header in browser mode ("" from servers).
	Origin string
	Source string
}

// Attribution says how a lead was attributed.
type Attribution struct {
	Status    string // attributed, provisional, unattributed
	ClickID   *string
	PartnerID *int64
	ProgramID *int64
}

// Result is the recorded lead.
type Result struct {
	LeadID      *int64
	CustomerKey *string
	Provisional bool
	ProgramID   int64
	Attribution Attribution
}

// A sale marks its customer's leads converted through this package's database function leads_convert
// (pkg/leads/sql/leads_convert.sql), called by the sale's statement.
