package clicks

// The click's database call, its inputs and its answer, for the SQL tests of package clicks_test.
var RecordCall = recordCall

type (
	RecordInput = recordInput
	RecordFixed = recordFixed
	RecordRow   = recordRow
)
