package sales

// The refund's database calls, their inputs and their answers, for the SQL tests of package sales_test
// (refund_sql_test.go).
var (
	RefundStateCall = refundStateCall
	RefundWriteCall = refundWriteCall
)

type (
	RefundStateInput = refundStateInput
	RefundState      = refundState
	RefundWriteInput = refundWriteInput
	RefundWritten    = refundWritten
)

// RefundNow is what the refund's calls take once per call.
type RefundNow = refundNow
