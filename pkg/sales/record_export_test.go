package sales

// The sale's database calls, their inputs and answers, for the SQL tests of package sales_test.
var (
	StateCall  = stateCall
	RecordCall = recordCall
)

type (
	StateInput  = stateInput
	State       = state
	RecordInput = recordInput
	Written     = written
)

// RecordFixed is what sales_record takes once per call.
type RecordFixed = recordFixed
