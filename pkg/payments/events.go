package payments

import (
	"encoding/json"
	"time"
)

// The parts of Stripe's objects this package reads, across API versions: fields that moved are all
// listed, and a reference may arrive as an id or as the expanded object.

type stripeEvent struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Livemode bool   `json:"livemode"`
	Created  int64  `json:"created"`
	Data     struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// created is when the event happened, or now() when it does not say.
func (e stripeEvent) created(now func() time.Time) time.Time {
	if e.Created == 0 {
		return now()
	}
	return time.Unix(e.Created, 0)
}

// ref is an object reference: "pi_123", {"id": "pi_123", …} or null.
type ref struct{ ID string }

func (r *ref) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &r.ID)
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	r.ID = obj.ID
	return nil
}

type checkoutSession struct {
	ID              string            `json:"id"`
	Mode            string            `json:"mode"`
	PaymentStatus   string            `json:"payment_status"`
	AmountTotal     int64             `json:"amount_total"`
	Currency        string            `json:"currency"`
	Metadata        map[string]string `json:"metadata"`
	PaymentIntent   ref               `json:"payment_intent"`
	CustomerEmail   string            `json:"customer_email"`
	CustomerDetails *struct {
		Email string `json:"email"`
	} `json:"customer_details"`
}

type invoice struct {
	ID            string            `json:"id"`
	AmountPaid    int64             `json:"amount_paid"`
	Currency      string            `json:"currency"`
	BillingReason string            `json:"billing_reason"`
	CustomerEmail string            `json:"customer_email"`
	Metadata      map[string]string `json:"metadata"`
	// Until 2025-02: subscription, subscription_details, payment_intent, charge.
	Subscription        ref `json:"subscription"`
	SubscriptionDetails *struct {
		Metadata map[string]string `json:"metadata"`
	} `json:"subscription_details"`
	PaymentIntent ref `json:"payment_intent"`
	Charge        ref `json:"charge"`
	// From 2025-03-31.basil: parent.subscription_details and (when expanded) payments.
	Parent struct {
		SubscriptionDetails *struct {
			Subscription ref               `json:"subscription"`
			Metadata     map[string]string `json:"metadata"`
		} `json:"subscription_details"`
	} `json:"parent"`
	Payments *struct {
		Data []struct {
			Payment struct {
				PaymentIntent ref `json:"payment_intent"`
				Charge        ref `json:"charge"`
			} `json:"payment"`
		} `json:"data"`
	} `json:"payments"`
	Lines struct {
		Data []struct {
			Metadata map[string]string `json:"metadata"`
			Plan     *struct {
				Interval string `json:"interval"`
			} `json:"plan"`
			Price *struct {
				Recurring *struct {
					Interval string `json:"interval"`
				} `json:"recurring"`
			} `json:"price"`
		} `json:"data"`
	} `json:"lines"`
	StatusTransitions struct {
		PaidAt *int64 `json:"paid_at"`
	} `json:"status_transitions"`
}

type charge struct {
	ID             string `json:"id"`
	AmountRefunded int64  `json:"amount_refunded"`
	PaymentIntent  ref    `json:"payment_intent"`
	Invoice        ref    `json:"invoice"` // until 2025-02
}

type dispute struct {
	ID            string `json:"id"`
	Amount        int64  `json:"amount"`
	Reason        string `json:"reason"`
	Charge        ref    `json:"charge"`
	PaymentIntent ref    `json:"payment_intent"`
}
