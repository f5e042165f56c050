package apikeys

import "errors"

// ErrProgramMismatch means a request names another program than its API key's.
var ErrProgramMismatch = errors.New("program_id does not match the API key")

// Claim is what a request says about its program: the program of the valid key it carried, if it
// carried one, and the program it names itself (additional_data.program_id), if it names one.
type Claim struct {
	HasKey       bool
	KeyProgramID int64
	Named        *int64
}

// ClaimOf is the claim of a request that carried k (when hasKey) and named the program named (nil: none).
func ClaimOf(k Key, hasKey bool, named *int64) Claim {
	return Claim{HasKey: hasKey, KeyProgramID: k.ProgramID, Named: named}
}

// CheckTest is the test-mode rule: a test event that carries a key and names a program must name the
// key's program. Events that are not tests, and tests with only one of the two, pass.
func (c Claim) CheckTest(test bool) error {
	if test && c.HasKey && c.Named != nil && *c.Named != c.KeyProgramID {
		return ErrProgramMismatch
	}
	return nil
}
