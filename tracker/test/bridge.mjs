// A line-oriented JSON bridge to headless Chromium for the Go browser tests (pkg/testkit/browsertest: the
// tracker's and the dashboard's).
// Each stdin line is {"id", "op", ...args}; each answer is one stdout line {"id", "result"} or
// {"id", "error"}. The first line out is {"ready": true}. A waiting op gives up after "timeout" ms (its
// test's own deadline, which the Go side sends; 0: never), not after a guess at how slow the machine is.
// Chromium is Debian's headless shell (/usr/bin/chromium-headless-shell, or CHROMIUM): Chromium's old
// headless mode, a third of the full browser's CPU in these tests. playwright-core downloads nothing.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import readline from "node:readline";
import { chromium } from "playwright-core";

// axe-core's source (pinned in package.json), read once when the first axe op asks for it.
let axeSource;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium-headless-shell",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    // Brand sites on their own hostnames, all served by the test on 127.0.0.1.
    `--host-resolver-rules=${process.env.HOST_RESOLVER_RULES || "MAP *.test 127.0.0.1"}`,
  ],
});

const pages = new Map();
let nextPage = 1;

const ops = {
  // open makes a fresh browser context (its own cookie jar) with one page that records what happens.
  async open({ ignoreHTTPSErrors }) {
    const context = await browser.newContext({ ignoreHTTPSErrors: !!ignoreHTTPSErrors });
    const page = await context.newPage();
    const entry = { context, page, console: [], errors: [], requests: [], dialogs: [] };
    page.on("console", (m) => entry.console.push({ type: m.type(), text: m.text() }));
    // A confirm() (regenerating a key) is recorded and accepted.
    page.on("dialog", (d) => {
      entry.dialogs.push(d.message());
      d.accept().catch(() => {});
    });
    page.on("pageerror", (e) => entry.errors.push(String(e)));
    page.on("request", (r) => entry.requests.push({ method: r.method(), url: r.url() }));
    const id = nextPage++;
    pages.set(id, entry);
    return id;
  },
  async goto({ page, url, timeout }) {
    const res = await get(page).page.goto(url, { waitUntil: "load", timeout });
    return res ? res.status() : 0;
  },
  // reload loads the page's address again, as the browser's reload button does.
  async reload({ page, timeout }) {
    const res = await get(page).page.reload({ waitUntil: "load", timeout });
    return res ? res.status() : 0;
  },
  // eval evaluates a JavaScript expression in the page; a promise is awaited.
  async eval({ page, expr }) {
    const v = await get(page).page.evaluate(expr);
    return v === undefined ? null : v;
  },
  // waitFor waits until the expression is truthy in the page. The page itself re-checks it (every 50 ms),
  // so waiting costs one round trip, not one per check; a navigation ends that evaluation and it starts
  // again in the new document. The expression is part of the evaluated source (as in eval), which pages
  // with a strict Content-Security-Policy (no eval) allow, unlike waitForFunction.
  async waitFor({ page, expr, timeout }) {
    const p = get(page).page;
    const deadline = timeout ? Date.now() + timeout : Infinity;
    for (;;) {
      const left = deadline - Date.now();
      let last;
      try {
        // true once the expression holds; otherwise, at the deadline, what it last threw ("" if nothing).
        const ok = await p.evaluate(`new Promise((resolve) => {
          const end = ${Number.isFinite(left) ? `Date.now() + ${Math.max(left, 0)}` : "Infinity"};
          const check = () => {
            let v, thrown = "";
            try { v = (${expr}); } catch (e) { thrown = String(e); }
            if (v) resolve(true);
            else if (Date.now() > end) resolve(thrown);
            else setTimeout(check, 50);
          };
          check();
        })`);
        if (ok === true) return true;
        last = ok || undefined;
      } catch (e) {
        last = e; // the page navigated
      }
      if (Date.now() > deadline) throw new Error(`waited ${Math.round(timeout / 1000)} s for ${expr}` + (last ? `: ${last}` : ""));
      await new Promise((r) => setTimeout(r, 50)); // the page navigated: wait in the new document
    }
  },
  // waitForConsole waits until the page has logged a message containing every one of parts:
  // messages arrive after the events that cause them (a request refused by the page's policy, say).
  async waitForConsole({ page, parts, timeout }) {
    const entry = get(page);
    const deadline = timeout ? Date.now() + timeout : Infinity;
    while (!entry.console.some((m) => parts.every((p) => m.text.includes(p)))) {
      if (Date.now() > deadline) {
        throw new Error(`waited ${Math.round(timeout / 1000)} s for a console message with ${JSON.stringify(parts)}; got ${JSON.stringify(entry.console)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  },
  async click({ page, selector, timeout }) {
    await get(page).page.click(selector, { timeout });
    return true;
  },
  async fill({ page, selector, value, timeout }) {
    await get(page).page.fill(selector, value, { timeout });
    return true;
  },
  // press presses a key (as Playwright names it: "Tab", "Enter", "Shift+Tab") where the focus is.
  async press({ page, key }) {
    await get(page).page.keyboard.press(key);
    return true;
  },
  async select({ page, selector, value, timeout }) {
    await get(page).page.selectOption(selector, value, { timeout });
    return true;
  },
  // download clicks the element selector matches and answers the file the click downloads: its name (as
  // the response's Content-Disposition or the link suggests), its URL and its bytes (base64).
  async download({ page, selector, timeout }) {
    const p = get(page).page;
    const [dl] = await Promise.all([p.waitForEvent("download", { timeout }), p.click(selector, { timeout })]);
    const failure = await dl.failure();
    if (failure) throw new Error(`download of ${dl.url()} failed: ${failure}`);
    const chunks = [];
    for await (const chunk of await dl.createReadStream()) chunks.push(chunk);
    return { name: dl.suggestedFilename(), url: dl.url(), body: Buffer.concat(chunks).toString("base64") };
  },
  // screenshot answers a PNG (base64) of the element, or of the whole page without a selector.
  async screenshot({ page, selector, timeout }) {
    const p = get(page).page;
    const png = selector ? await p.locator(selector).screenshot({ timeout }) : await p.screenshot({ fullPage: true, timeout });
    return png.toString("base64");
  },
  // viewport sets the tab's window size in CSS pixels (a phone's 390 wide, say).
  async viewport({ page, width, height }) {
    await get(page).page.setViewportSize({ width, height });
    return true;
  },
  // axe runs axe-core (tracker/package.json pins it) on the page as it is now, or on the elements the
  // selectors of within match (and what they hold), and answers its violations of the rules tagged tags
  // and of the rules named in rules: each rule's id, impact, help and the nodes that fail it (their
  // selectors, HTML and what to fix). Its
  // 650 kB of source go into the page once per document through DevTools (Runtime.evaluate: quicker than
  // page.evaluate's way), which the pages' Content-Security-Policy does not govern.
  async axe({ page, tags, rules, within }) {
    const entry = get(page);
    const p = entry.page;
    if (!(await p.evaluate("typeof window.axe === 'object'"))) {
      // (its value is undefined: DevTools keeps no handle on it)
      axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8") + "\n;void 0";
      entry.cdp ??= await entry.context.newCDPSession(p);
      const { exceptionDetails } = await entry.cdp.send("Runtime.evaluate", { expression: axeSource });
      if (exceptionDetails) throw new Error(`axe-core did not load: ${JSON.stringify(exceptionDetails)}`);
    }
    return p.evaluate(
      ({ tags, rules, within }) =>
        window.axe.run(within && within.length ? { include: within.map((s) => [s]) } : document, {
          runOnly: { type: "tag", values: tags || [] },
          rules: Object.fromEntries((rules || []).map((id) => [id, { enabled: true }])),
          resultTypes: ["violations"],
        }).then((r) =>
          r.violations.map((v) => ({
            id: v.id,
            impact: v.impact,
            help: v.help,
            helpUrl: v.helpUrl,
            nodes: v.nodes.map((n) => ({ target: n.target.map(String), html: n.html, summary: n.failureSummary })),
          })),
        ),
      { tags, rules, within },
    );
  },
  async cookies({ page }) {
    return get(page).context.cookies();
  },
  async record({ page }) {
    const { console, errors, requests, dialogs } = get(page);
    return { console, errors, requests, dialogs };
  },
  async close({ page }) {
    await get(page).context.close();
    pages.delete(page);
    return true;
  },
};

function get(id) {
  const p = pages.get(id);
  if (!p) throw new Error(`no page ${id}`);
  return p;
}

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

send({ ready: true });
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", async (line) => {
  let req;
  try {
    req = JSON.parse(line);
    const op = ops[req.op];
    if (!op) throw new Error(`unknown op ${req.op}`);
    send({ id: req.id, result: await op(req) });
  } catch (e) {
    send({ id: req && req.id, error: String(e && e.stack ? e.stack : e) });
  }
});
rl.on("close", async () => {
  await browser.close();
  process.exit(0);
});
