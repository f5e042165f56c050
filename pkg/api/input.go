package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// The rules every request's text meets before a handler sees it (docs/rules.md#bad-input-abuse-and-faults):
// PostgreSQL refuses NUL characters and invalid UTF-8 in text, so neither may reach it; deep JSON and huge
// forms cost more than any real client needs.
const (
	// maxJSONDepth is how deeply objects and arrays may nest in a JSON body.
	maxJSONDepth = 32
	// maxFields is how many fields a form or query string may carry.
	maxFields = 1000
	// maxSegment is the longest path parameter that can name something (a slug, a token, a file):
	// longer ones are refused before a lookup, as an index entry of them could not be.
	maxSegment = 255
)

// cleanText refuses a value the database cannot store as text.
func cleanText(field, v string) *apierr.Error {
	if strings.IndexByte(v, 0) >= 0 {
		return apierr.NULInField(field)
	}
	if !utf8.ValidString(v) {
		return apierr.Invalid(field + " must be valid UTF-8")
	}
	return nil
}

// fieldName shows a member name in a message (a NUL in a name is written as its JSON escape).
func fieldName(path, key string) string {
	key = strings.ReplaceAll(key, "\x00", `\u0000`)
	if path == "" {
		return key
	}
	return path + "." + key
}

// checkJSON refuses a JSON body (valid JSON) nested deeper than maxJSONDepth or with a NUL character in
// a string or a member name. Invalid UTF-8 needs no check: the JSON decoder replaces it.
func checkJSON(raw []byte) error {
	depth, nul := scanJSON(raw)
	if depth > maxJSONDepth {
		return apierr.Invalid("Request body is nested too deeply")
	}
	if !nul {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	field, found, err := findNUL(dec, "")
	if err != nil || !found {
		return nil // the escape was not a NUL after all (it never is: scanJSON reads escapes exactly)
	}
	if field == "" {
		field = "Request body"
	}
	return apierr.NULInField(field)
}

// scanJSON is one pass over a valid JSON text: its deepest nesting, and whether a string holds the
// escape \u0000 (raw control characters are not valid JSON, so the escape is the only way to send NUL).
func scanJSON(raw []byte) (maxDepth int, nul bool) {
	depth, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				if bytes.HasPrefix(raw[i+1:], []byte("u0000")) {
					nul = true
				}
				i++ // the escaped character cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case '}', ']':
			depth--
		}
	}
	return maxDepth, nul
}

// findNUL walks the value dec reads next, in document order, to the first string or member name with a
// NUL character, and names it: "name", "additional_data.program_id", "allowed_origins[0]" ("" for the
// body itself).
func findNUL(dec *json.Decoder, path string) (string, bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", false, err
	}
	switch v := tok.(type) {
	case string:
		return path, strings.IndexByte(v, 0) >= 0, nil
	case json.Delim:
		if v == '{' {
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return "", false, err
				}
				key, _ := kt.(string)
				field := fieldName(path, key)
				if strings.IndexByte(key, 0) >= 0 {
					return field, true, nil
				}
				if f, found, err := findNUL(dec, field); found || err != nil {
					return f, found, err
				}
			}
		} else if v == '[' {
			for i := 0; dec.More(); i++ {
				if f, found, err := findNUL(dec, fmt.Sprintf("%s[%d]", path, i)); found || err != nil {
					return f, found, err
				}
			}
		}
		_, err := dec.Token() // the closing delimiter
		return "", false, err
	}
	return "", false, nil
}

// checkSegments answers 404 (in the route's envelope: the pages' 404 page) for a path parameter among
// names that cannot name anything: one with a NUL character, invalid UTF-8 or more than maxSegment bytes.
// Public pages take any input and answer it with a page, never a 5xx: no such value reaches a lookup,
// where PostgreSQL would refuse it as text.
func checkSegments(c echo.Context, names []string) error {
	for _, name := range names {
		v := c.Param(name)
		if c.Request().URL.RawPath != "" {
			// echo routed on the escaped path, so the value is still escaped; the generated binder
			// unescapes it, and so must this check.
			var err error
			if v, err = url.PathUnescape(v); err != nil {
				return noSuchAddress()
			}
		}
		if len(v) > maxSegment || cleanText(name, v) != nil {
			return noSuchAddress()
		}
	}
	return nil
}

// noSuchAddress is the answer to a path that cannot name anything.
func noSuchAddress() *apierr.Error {
	return apierr.New(apierr.KindNotFound, "Nothing is at this address. Check the link you followed.")
}

// checkQuery refuses a query string whose declared parameters cannot be read as text. Parameters the
// operation does not declare are nobody's business (and pairs that do not decode are dropped by the
// router, as it always did), but past maxFields the router drops every parameter.
func checkQuery(raw string, declared []string) error {
	if raw == "" || len(declared) == 0 {
		return nil
	}
	if strings.Count(raw, "&") >= maxFields {
		return apierr.Invalid(fmt.Sprintf("Invalid query string: more than %d parameters", maxFields))
	}
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil || !slices.Contains(declared, name) {
			continue
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return apierr.Invalid("Invalid query parameter " + name + ": " + escapeProblem(err))
		}
		if e := cleanText(name, value); e != nil {
			return e
		}
	}
	return nil
}

// parseForm reads an application/x-www-form-urlencoded body strictly: a pair that does not decode, a
// field that is not clean text, or more than maxFields fields refuse the whole form (net/http would
// fail the request instead, or drop the fields silently).
func parseForm(raw string) (url.Values, error) {
	form := url.Values{}
	if strings.Count(raw, "&") >= maxFields {
		return nil, apierr.Invalid(fmt.Sprintf("Invalid form body: more than %d fields", maxFields))
	}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			// net/http refuses ';' as a separator; so does this, rather than guess.
			return nil, apierr.Invalid("Invalid form body: ';' is not a field separator")
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, apierr.Invalid("Invalid form body: " + escapeProblem(err))
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, apierr.Invalid("Invalid form field " + shownName(name) + ": " + escapeProblem(err))
		}
		if e := cleanText(shownName(name), name); e != nil {
			return nil, e
		}
		if e := cleanText(name, value); e != nil {
			return nil, e
		}
		form.Add(name, value)
	}
	return form, nil
}

// shownName is a field name fit for a message even when it is not clean text.
func shownName(name string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", `\u0000`), "\uFFFD")
}

// escapeProblem words a failed %-decoding without echoing invalid bytes.
func escapeProblem(err error) string {
	var esc url.EscapeError
	if errors.As(err, &esc) {
		return fmt.Sprintf("invalid %%-escape %q", strings.ToValidUTF8(string(esc), "\uFFFD"))
	}
	return "invalid %-escape"
}
