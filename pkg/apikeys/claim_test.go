package apikeys_test

import (
	"errors"
	"testing"

	"github.com/reftrack/reftrack/pkg/apikeys"
)

func TestClaimCheckTest(t *testing.T) {
	t.Parallel()
	seven, eight := int64(7), int64(8)
	for _, c := range []struct {
		name  string
		test  bool
		claim apikeys.Claim
		want  error
	}{
		{"test, key and the key's program", true, apikeys.Claim{HasKey: true, KeyProgramID: 7, Named: &seven}, nil},
		{"test, key and another program", true, apikeys.Claim{HasKey: true, KeyProgramID: 7, Named: &eight}, apikeys.ErrProgramMismatch},
		{"test, key, no program named", true, apikeys.Claim{HasKey: true, KeyProgramID: 7}, nil},
		{"test, a program named, no key", true, apikeys.Claim{Named: &eight}, nil},
		{"test, nothing", true, apikeys.Claim{}, nil},
		{"not a test, key and another program", false, apikeys.Claim{HasKey: true, KeyProgramID: 7, Named: &eight}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.claim.CheckTest(c.test); !errors.Is(got, c.want) || (got == nil) != (c.want == nil) {
				t.Errorf("CheckTest(%v) = %v, want %v", c.test, got, c.want)
			}
		})
	}
	k := apikeys.Key{ProgramID: 7}
	if got := apikeys.ClaimOf(k, true, &eight); got != (apikeys.Claim{HasKey: true, KeyProgramID: 7, Named: &eight}) {
		t.Errorf("ClaimOf = %+v", got)
	}
}
