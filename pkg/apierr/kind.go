package apierr

// Kind is what went wrong, in the vocabulary of the interface's error codes: a kind's name is the
// error.code every answer of that kind carries, in either envelope. The HTTP layer's one error table
// decides a kind's status; the route's policy decides its envelope. The spec lists every code
// (x-reftrack-error-codes on the ErrorCode schema), and a test keeps that list, the table and the
// README in step.
type Kind string

// The kinds of error reftrack answers.
const (
	KindInvalid             Kind = "invalid_request"
	KindNoAttribution       Kind = "no_attribution"
	KindUnauthorized        Kind = "unauthorized"
	KindInvalidKey          Kind = "invalid_key"
	KindKeyRotationRequired Kind = "api_key_rotation_required"
	KindForbidden           Kind = "forbidden"
	KindAccountSuspended    Kind = "account_suspended"
	KindNotFound            Kind = "not_found"
	KindMethodNotAllowed    Kind = "method_not_allowed"
	KindConflict            Kind = "conflict"
	KindDuplicate           Kind = "duplicate_transaction"
	KindGone                Kind = "gone"
	KindLinkDisabled        Kind = "link_disabled"
	KindPayloadTooLarge     Kind = "payload_too_large"
	KindUnsupportedMedia    Kind = "unsupported_media_type"
	KindUnsupportedCurrency Kind = "unsupported_currency"
	KindRateLimited         Kind = "rate_limited"
	KindInternal            Kind = "internal_error"
	// KindServiceUnavailable is a database that cannot be reached or answers too slowly: retry later.
	KindServiceUnavailable Kind = "service_unavailable"
)

// Kinds lists every kind, for checks of names read from the spec.
var Kinds = []Kind{
	KindInvalid, KindNoAttribution, KindUnauthorized, KindInvalidKey, KindKeyRotationRequired, KindForbidden,
	KindAccountSuspended, KindNotFound, KindMethodNotAllowed, KindConflict, KindDuplicate, KindGone,
	KindLinkDisabled, KindPayloadTooLarge, KindUnsupportedMedia, KindUnsupportedCurrency, KindRateLimited,
	KindInternal, KindServiceUnavailable,
}

// Code is the error.code answers of kind k carry.
func (k Kind) Code() string { return string(k) }
