package leads

// The lead's database calls, their inputs and their answers, for the SQL tests of package leads_test.
var (
	StateCall = stateCall
	WriteCall = writeCall
)

type (
	StateInput = stateInput
	State      = state
	WriteInput = writeInput
	Written    = written
)

// Kinds of write, as leads_write takes them.
const (
	KindProvisional = kindProvisional
	KindSettle      = kindSettle
)
