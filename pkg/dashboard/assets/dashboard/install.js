  // --- install -------------------------------------------------------------------------------------

  // The Install view: the tracker tag with the program's id, and the lead, sale and refund calls in curl,
  // Go and TypeScript (as docs/integration.md writes them), each with Copy. The addresses are this
  // server's (the page's origin); the key is read from the environment, never put in the page.
  var CALLS = [
    { name: "lead", title: "The lead", when: "when a visitor signs up (the tracker keeps the click id for you)",
      curl: function (base) {
        return "curl -s -X POST " + base + "/api/v1/track/lead \\\n  -H \"Authorization: Bearer $REFTRACK_API_KEY\" -H 'Content-Type: application/json' \\\n" +
          "  -d '{\"click_id\":\"<svc_click_id>\",\"customer_key\":\"user_4711\",\"email\":\"ada@example.com\"}'";
      },
      go: "rt.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: \"user_4711\", ClickID: clickID, Email: \"ada@example.com\"})",
      ts: "await reftrack.trackLead({ customerExternalId: \"user_4711\", clickId, email: \"ada@example.com\" });" },
    { name: "sale", title: "The sale", when: "when a customer pays (amounts in the currency's smallest unit)",
      curl: function (base) {
        return "curl -s -X POST " + base + "/api/v1/track/sale \\\n  -H \"Authorization: Bearer $REFTRACK_API_KEY\" -H 'Content-Type: application/json' \\\n" +
          "  -d '{\"transaction_id\":\"in_1PqZ2eLkdIwHu7ix\",\"amount_cents\":4900,\"currency\":\"USD\",\"customer_key\":\"user_4711\"}'";
      },
      go: "res := rt.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: \"user_4711\", AmountCents: 4900, Currency: \"USD\", InvoiceID: \"in_1PqZ2eLkdIwHu7ix\"})",
      ts: "const res = await reftrack.trackSale({ customerExternalId: \"user_4711\", amount: 4900, currency: \"USD\", invoiceId: \"in_1PqZ2eLkdIwHu7ix\" });" },
    { name: "refund", title: "The refund", when: "with the sale's transaction id; the amount refunds part (default: all that is left)",
      curl: function (base) {
        return "curl -s -X POST " + base + "/api/v1/track/refund \\\n  -H \"Authorization: Bearer $REFTRACK_API_KEY\" -H 'Content-Type: application/json' \\\n" +
          "  -d '{\"transaction_id\":\"in_1PqZ2eLkdIwHu7ix\",\"refund_amount_cents\":2450}'";
      },
      go: "rt.TrackRefund(ctx, sdk.RefundInput{InvoiceID: \"in_1PqZ2eLkdIwHu7ix\", RefundAmountCents: 2450})",
      ts: "await reftrack.trackRefund({ invoiceId: \"in_1PqZ2eLkdIwHu7ix\", refundAmountCents: 2450 });" }
  ];

  // The SDKs' first lines, before each call.
  var SETUP = {
    go: function (base) { return "rt := sdk.New(os.Getenv(\"REFTRACK_API_KEY\"), sdk.WithBaseURL(\"" + base + "\"))\n"; },
    ts: function (base) {
      return "import { Reftrack } from \"@reftrack/sdk\";\nconst reftrack = new Reftrack({ apiKey: process.env.REFTRACK_API_KEY ?? \"\", baseUrl: \"" + base + "\" });\n";
    }
  };

  var installLang = "curl";

  function startInstall() {
    document.querySelectorAll("#install-langs button").forEach(function (b) {
      b.addEventListener("click", function () {
        installLang = b.getAttribute("data-lang");
        refreshInstall();
      });
    });
  }

  // code sets a code box's text and its Copy button's.
  function code(pre, button, text) {
    pre.textContent = text;
    button.setAttribute("data-text", text);
  }

  function refreshInstall() {
    var base = window.location.origin;
    code($("install-tag"), $("install-tag-copy"), "<script defer src=\"" + base + "/js/svc.js\" data-svc-program-id=\"" +
      state.program.id + "\"></script>");
    document.querySelectorAll("#install-langs button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-lang") === installLang));
    });
    var box = $("install-calls");
    box.textContent = "";
    CALLS.forEach(function (c) {
      box.appendChild(el("h4", {}, c.title + ", " + c.when));
      var row = box.appendChild(el("div", { "class": "code-row" }));
      // A box that scrolls is reachable by the keyboard (tabindex), and says what it holds.
      var pre = row.appendChild(el("pre", { "class": "code", "data-call": c.name, tabindex: "0", "aria-label": "The " + c.name + " call" }));
      var copy = row.appendChild(el("button", { type: "button", "class": "copy", "aria-label": "Copy the " + c.name + " call" }, "Copy"));
      code(pre, copy, installLang === "curl" ? c.curl(base) : SETUP[installLang](base) + c[installLang]);
    });
    return Promise.resolve();
  }

