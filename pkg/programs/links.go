package programs

import "errors"

// ErrLinkNotFound means no referral link has that id.
var ErrLinkNotFound = errors.New("referral link not found")

// ShortLinkTakenError refuses a chosen short link that another referral link has.
type ShortLinkTakenError struct{ ShortLink string }

func (e *ShortLinkTakenError) Error() string { return "short link " + e.ShortLink + " taken" }

// Is makes a ShortLinkTakenError match ErrShortLinkTaken.
func (e *ShortLinkTakenError) Is(target error) bool { return target == ErrShortLinkTaken }
