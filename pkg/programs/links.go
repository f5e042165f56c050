package programs

import "errors"

// ErrLinkNotFound means no referral link has that id.
var ErrLinkNotFound = errors.New("referral link not found")
