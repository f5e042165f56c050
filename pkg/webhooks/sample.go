package webhooks

import "time"

// Sample is the data of a test event of type t (POST …/test): a made-up resource of the type's shape,
// with is_test true and ids 0, so that a receiver can tell it from a real one and never books it.
func Sample(t string, programID int64, now time.Time) map[string]any {
	at := now.UTC().Format(time.RFC3339)
	commission := func(status string) map[string]any {
		return map[string]any{"id": 0, "program_id": programID, "partner_id": 0, "sale_id": 0, "transaction_id": "txn_test",
			"amount_cents": 1500, "reversed_amount_cents": 0, "payable_cents": 1500, "currency": "USD", "status": status,
			"available_on": at, "approved_at": nil, "rejected_reason": nil, "payout_id": nil, "paid_at": nil,
			"clawback_cents": 0, "is_test": true, "created_at": at}
	}
	sale := map[string]any{"id": 0, "event_type": "conversion", "timestamp": at, "click_id": "test_click",
		"amount_cents": 10000, "currency": "USD", "sale_type": "one_time", "payment_status": "paid",
		"processor_event_id": "txn_test", "is_recurring": false, "createdAt": at, "partner_id": 0,
		"refunded_amount_cents": 0, "is_test": true}
	payout := func(status string) map[string]any {
		p := map[string]any{"id": 0, "program_id": programID, "partner_id": 0, "partner_name": "Test Partner",
			"partner_email": "partner@example.com", "currency": "USD", "amount_cents": 1500, "commission_count": 1,
			"clawback_cents": 0, "status": status, "external_reference": nil, "failure_reason": nil, "created_at": at,
			"paid_at": nil, "is_test": true}
		switch status {
		case "paid":
			p["external_reference"], p["paid_at"] = "test-reference", at
		case "failed":
			p["failure_reason"] = "test failure"
		}
		return p
	}
	partner := map[string]any{"id": 0, "name": "Test Partner", "email": "partner@example.com", "program_id": programID,
		"partner_program_id": 0, "synthetic": false, "created_at": at, "is_test": true}
	switch t {
	case LeadCreated:
		return map[string]any{"id": 0, "event_type": "lead", "timestamp": at, "click_id": "test_click", "session_id": nil,
			"page_url": nil, "customer_key": "test_customer", "converted": false, "createdAt": at, "is_test": true}
	case SaleCreated:
		return sale
	case SaleRefunded:
		sale["payment_status"], sale["refunded_amount_cents"] = "refunded", 10000
		sale["refund"] = map[string]any{"id": 0, "amount_cents": 10000, "reason": "requested_by_customer",
			"refund_reason": nil, "commission_reversed_cents": 1500, "created_at": at}
		return sale
	case CommissionCreated:
		return commission("pending")
	case CommissionUpdated:
		c := commission("approved")
		c["approved_at"], c["previous_status"] = at, "pending"
		return c
	case PayoutCreated:
		return payout("processing")
	case PayoutPaid:
		return payout("paid")
	case PayoutFailed:
		return payout("failed")
	case PartnerCreated, PartnerUpdated:
		return partner
	case LinkUpdated:
		return map[string]any{"id": 0, "short_link": "test", "partner_id": 0, "program_id": programID, "enabled": false,
			"referral_url": "https://example.com/?aff=test", "created_at": at, "updated_at": at, "is_test": true}
	}
	return map[string]any{"is_test": true}
}
