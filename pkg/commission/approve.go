package commission

import (
	"fmt"
	"time"
)

// HoldError refuses to approve a commission still in its hold: the approval must wait for the hold to
// end, or say that it releases the hold early.
type HoldError struct {
	ID    int64
	Until time.Time
}

func (e *HoldError) Error() string {
	return fmt.Sprintf("Commission %d is in its hold until %s; approve it then, or release it early", e.ID,
		e.Until.UTC().Format(time.RFC3339))
}

// CheckHold says whether commission id, whose hold ends at availableOn, may be approved at now: once its
// hold has ended, or earlier when the approval releases the hold (releaseHold).
func CheckHold(id int64, availableOn time.Time, now time.Time, releaseHold bool) error {
	if releaseHold || !availableOn.After(now) {
		return nil
	}
	return &HoldError{ID: id, Until: availableOn}
}
