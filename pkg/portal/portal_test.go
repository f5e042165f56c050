package portal_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/portal"
	"github.com/reftrack/reftrack/pkg/seal"
)

func TestMaskEmail(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ada@example.com", "a***@example.com"},
		{"Ada.Lovelace+shop@Example.COM", "A***@Example.COM"},
		{"a@example.com", "a***@example.com"},
		{"élodie@exemple.fr", "é***@exemple.fr"},
		{"名前@例え.jp", "名***@例え.jp"},
		{"😀smile@example.com", "😀***@example.com"},
		{`"a@b"@example.com`, `"***@example.com`},
		{"\xffada@example.com", "\uFFFD***@example.com"},
		// Not an email: masked as a key.
		{"@example.com", "***om"},
		{"no-at-sign", "***gn"},
		{"", "***"},
	} {
		if got := portal.MaskEmail(c.in); got != c.want {
			t.Errorf("MaskEmail(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.in != "" && strings.Contains(portal.MaskEmail(c.in), c.in) {
			t.Errorf("MaskEmail(%q) shows it whole", c.in)
		}
	}
}

func TestMaskKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"cus_ABCDEF42", "cus_***42"},
		{"cus_12345", "cus_***45"},
		{"cus_1234", "cus_***"}, // too short to show its end
		{"cus_", "cus_***"},
		{"user_élodie-42", "***42"},
		{"john_smith_85", "***85"}, // a name before the "_" is hidden
		{"Cus_ABCDEF42", "***42"},  // a prefix is lower-case letters
		{"customer-123456", "***56"},
		{"12345", "***45"},
		{"1234", "***"},
		{"a", "***"},
		{"", "***"},
		{"_abcdef", "***ef"},
		{"abcdefgh_123456", "***56"}, // a prefix of 4 or more is no prefix
		{"cus_ab😀😀😀", "cus_***😀😀"},
		{"cus_abcdé", "cus_***dé"},
		{"ключ_клиента", "***та"}, // not a-z: no prefix
		{"ab_日本語テキスト", "ab_***スト"},
	} {
		if got := portal.MaskKey(c.in); got != c.want {
			t.Errorf("MaskKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPayoutDetailsCheck(t *testing.T) {
	bank := strings.Repeat("é", 1000)
	for _, c := range []struct {
		name string
		in   portal.PayoutDetails
		want portal.PayoutDetails // zero: refused
	}{
		{"paypal", portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com"}, portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com"}},
		{"paypal trimmed", portal.PayoutDetails{Method: "paypal", PayPalEmail: "  ada@example.com\n"}, portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com"}},
		{"paypal drops bank details", portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com", BankDetails: "IBAN"},
			portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com"}},
		{"bank transfer", portal.PayoutDetails{Method: "bank_transfer", BankDetails: "IBAN DE89 3704 0044 0532 0130 00\nBIC COBADEFFXXX"},
			portal.PayoutDetails{Method: "bank_transfer", BankDetails: "IBAN DE89 3704 0044 0532 0130 00\nBIC COBADEFFXXX"}},
		{"bank transfer trimmed", portal.PayoutDetails{Method: "bank_transfer", BankDetails: "  IBAN  "}, portal.PayoutDetails{Method: "bank_transfer", BankDetails: "IBAN"}},
		{"bank transfer drops the email", portal.PayoutDetails{Method: "bank_transfer", BankDetails: "IBAN", PayPalEmail: "ada@example.com"},
			portal.PayoutDetails{Method: "bank_transfer", BankDetails: "IBAN"}},
		{"1000 characters", portal.PayoutDetails{Method: "bank_transfer", BankDetails: bank}, portal.PayoutDetails{Method: "bank_transfer", BankDetails: bank}},
		{"1000 characters and spaces", portal.PayoutDetails{Method: "bank_transfer", BankDetails: " " + bank + " "}, portal.PayoutDetails{Method: "bank_transfer", BankDetails: bank}},

		{"1001 characters", portal.PayoutDetails{Method: "bank_transfer", BankDetails: bank + "x"}, portal.PayoutDetails{}},
		{"blank bank details", portal.PayoutDetails{Method: "bank_transfer", BankDetails: " \t\n"}, portal.PayoutDetails{}},
		{"no bank details", portal.PayoutDetails{Method: "bank_transfer"}, portal.PayoutDetails{}},
		{"no email", portal.PayoutDetails{Method: "paypal"}, portal.PayoutDetails{}},
		{"a name with the email", portal.PayoutDetails{Method: "paypal", PayPalEmail: "Ada <ada@example.com>"}, portal.PayoutDetails{}},
		{"two emails", portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com, bob@example.com"}, portal.PayoutDetails{}},
		{"not an email", portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada"}, portal.PayoutDetails{}},
		{"no domain", portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@localhost"}, portal.PayoutDetails{}},
		{"too long", portal.PayoutDetails{Method: "paypal", PayPalEmail: strings.Repeat("a", 310) + "@example.com"}, portal.PayoutDetails{}},
		{"another method", portal.PayoutDetails{Method: "wire", BankDetails: "IBAN"}, portal.PayoutDetails{}},
		{"a method's other case", portal.PayoutDetails{Method: "PayPal", PayPalEmail: "ada@example.com"}, portal.PayoutDetails{}},
		{"no method", portal.PayoutDetails{PayPalEmail: "ada@example.com"}, portal.PayoutDetails{}},
	} {
		got, err := c.in.Check()
		if c.want == (portal.PayoutDetails{}) {
			if !errors.Is(err, portal.ErrPayoutDetails) || got != (portal.PayoutDetails{}) {
				t.Errorf("%s: %+v, %v; want ErrPayoutDetails", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestCheckLinkCode(t *testing.T) {
	for _, code := range []string{"abc", "ada-reviews", "a1-b2", "---", "123", strings.Repeat("z", 32)} {
		if err := portal.CheckLinkCode(code); err != nil {
			t.Errorf("CheckLinkCode(%q) = %v", code, err)
		}
	}
	for _, code := range []string{"", "ab", strings.Repeat("z", 33), "ABC", "Ada-reviews", "ada_reviews", "ada reviews", "ada.reviews",
		"ada/reviews", "abc\n", "\nabc", "ädä", "abc\x00", "ab%20"} {
		if err := portal.CheckLinkCode(code); !errors.Is(err, portal.ErrLinkCode) {
			t.Errorf("CheckLinkCode(%q) = %v, want ErrLinkCode", code, err)
		}
	}
}

// The payout details' key is derived for them: the webhook secrets' sealer (the key itself) opens none of
// them.
func TestDetailsSealedUnderTheirOwnKey(t *testing.T) {
	d, err := portal.NewDetails(seal.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	in := portal.PayoutDetails{Method: "paypal", PayPalEmail: "ada@example.com"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := d.Sealer.Seal(string(b))
	if err != nil {
		t.Fatal(err)
	}
	webhooks, err := seal.New(seal.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := webhooks.Open(sealed); err == nil {
		t.Error("the webhook secrets' key opens payout details")
	}
	again, err := portal.NewDetails(seal.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := again.Sealer.Open(sealed); err != nil || plain != string(b) {
		t.Errorf("another server with the same key: %q, %v", plain, err)
	}
	if _, err := portal.NewDetails(make([]byte, 16)); err == nil {
		t.Error("a short key is taken")
	}
}
