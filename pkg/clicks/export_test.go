package clicks

// The click's database call, its inputs and its answer, for the SQL tests of package clicks_test.
var (
	RecordCall  = recordCall
	PrepareCall = prepareCall
	ExpireCall  = expireCall
)

type (
	RecordInput = recordInput
	RecordFixed = recordFixed
	RecordRow   = recordRow

	PrepareInput = prepareInput
	ExpireInput  = expireInput
)
