// Package pgcall calls a database function with named inputs. A batch call's inputs are a Go struct per
// row (Row) and one of values for the whole call (Fixed); each field names its parameter with a `pg` tag.
// The function receives one array per Row field and one value per Fixed field, bound by name
// (`f(p_program => $1::bigint[], …)`), so nothing is matched by position. A nil pointer is NULL: there
// are no sentinel values. Check holds a call to its function's signature (pg_get_function_arguments), in
// the owner package's tests.
package pgcall

import (
	"context"
	"encoding/hex"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// None is the Fixed of a call without whole-call inputs.
type None struct{}

// Func is a call of the database function Name.
type Func[Row, Fixed any] struct {
	name   string
	params []param
	query  string
	// sizes remembers each array's last length, so the next batch's is allocated once, not regrown.
	sizes []atomic.Int64
}

// param is one input: a Row field sent as an array, or a Fixed field sent as a value.
type param struct {
	name  string // p_program
	typ   string // PostgreSQL type of one value: bigint, text, …
	field int
	array bool
	kind  kind
	null  bool // a pointer: nil is NULL
}

type kind int

const (
	kindInt kind = iota
	kindText
	kindBool
	kindBytes
	kindTime
)

var timeType = reflect.TypeFor[time.Time]()

// New describes the call of function name with inputs Row (one array each) and Fixed (one value each),
// each field tagged `pg:"p_name"`, or `pg:"p_name,type"` to have PostgreSQL read it as another type than
// its Go type's (for example `pg:"p_ip,inet"` on a string). It panics when a field has no `pg` tag or a
// type it cannot send: that is a mistake in the code, found by the first test that builds the call.
func New[Row, Fixed any](name string) *Func[Row, Fixed] {
	f := &Func[Row, Fixed]{name: name}
	f.params = append(fields(reflect.TypeFor[Row](), true), fields(reflect.TypeFor[Fixed](), false)...)
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteString("SELECT * FROM " + name + "(")
	for i, p := range f.params {
		if seen[p.name] {
			panic(fmt.Sprintf("pgcall %s: parameter %s twice", name, p.name))
		}
		seen[p.name] = true
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s => $%d::%s", p.name, i+1, p.sqlType())
	}
	b.WriteString(")")
	f.query = b.String()
	f.sizes = make([]atomic.Int64, len(f.params))
	return f
}

func fields(t reflect.Type, array bool) []param {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("pgcall: %s is not a struct", t))
	}
	var out []param
	for i := range t.NumField() {
		sf := t.Field(i)
		name, sqlType, _ := strings.Cut(sf.Tag.Get("pg"), ",")
		if name == "" {
			panic(fmt.Sprintf("pgcall: %s.%s has no pg tag", t, sf.Name))
		}
		p := param{name: name, field: i, array: array}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			p.null, ft = true, ft.Elem()
		}
		switch {
		case ft == timeType:
			p.kind, p.typ = kindTime, "timestamp with time zone" // pg_get_function_arguments' words
		case ft.Kind() == reflect.Int64:
			p.kind, p.typ = kindInt, "bigint"
		case ft.Kind() == reflect.Int32:
			p.kind, p.typ = kindInt, "integer"
		case ft.Kind() == reflect.String:
			p.kind, p.typ = kindText, "text"
		case ft.Kind() == reflect.Bool:
			p.kind, p.typ = kindBool, "boolean"
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8 && !p.null:
			p.kind, p.typ, p.null = kindBytes, "bytea", true // a nil slice is NULL
		default:
			panic(fmt.Sprintf("pgcall: %s.%s has type %s, which pgcall cannot send", t, sf.Name, sf.Type))
		}
		if sqlType != "" {
			p.typ = sqlType // sent in its Go type's text form, read as this type (e.g. inet from a string)
		}
		out = append(out, p)
	}
	return out
}

func (p param) sqlType() string {
	if p.array {
		return p.typ + "[]"
	}
	return p.typ
}

// Name is the function's name.
func (f *Func[Row, Fixed]) Name() string { return f.name }

// Query is the statement that calls the function, selecting every column it returns.
func (f *Func[Row, Fixed]) Query() string { return f.query }

// Signature is the function's arguments as pg_get_function_arguments words them for the definition the
// call expects, for example "p_program bigint[], p_txn text[]".
func (f *Func[Row, Fixed]) Signature() string {
	parts := make([]string, len(f.params))
	for i, p := range f.params {
		parts[i] = p.name + " " + p.sqlType()
	}
	return strings.Join(parts, ", ")
}

// Args are the statement's arguments for rows and fixed, in Query's order.
func (f *Func[Row, Fixed]) Args(rows []Row, fixed Fixed) []any {
	args := make([]any, len(f.params))
	fv := reflect.ValueOf(&fixed).Elem()
	rv := reflect.ValueOf(rows)
	for i, p := range f.params {
		if !p.array {
			args[i] = p.value(fv.Field(p.field))
			continue
		}
		b := make([]byte, 0, max(2+len(rows)*8, int(f.sizes[i].Load())))
		b = append(b, '{')
		for r := range rows {
			if r > 0 {
				b = append(b, ',')
			}
			b = p.appendElement(b, rv.Index(r).Field(p.field))
		}
		b = append(b, '}')
		f.sizes[i].Store(int64(len(b) + len(b)/8))
		args[i] = string(b)
	}
	return args
}

// Select runs the call and scans its rows into dest (a pointer to a slice of structs with db tags).
func (f *Func[Row, Fixed]) Select(ctx context.Context, q sqlx.QueryerContext, dest any, rows []Row, fixed Fixed) error {
	if err := sqlx.SelectContext(ctx, q, dest, f.query, f.Args(rows, fixed)...); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return nil
}

// value is a Fixed field as a driver value; nil for NULL.
func (p param) value(v reflect.Value) any {
	if p.null && v.IsNil() {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch p.kind {
	case kindTime:
		return v.Interface().(time.Time)
	case kindInt:
		return v.Int()
	case kindText:
		return v.String()
	case kindBool:
		return v.Bool()
	default:
		return v.Bytes()
	}
}

// appendElement appends v as an element of an array literal (its text form, quoted where needed).
func (p param) appendElement(b []byte, v reflect.Value) []byte {
	if p.null && v.IsNil() {
		return append(b, "NULL"...)
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch p.kind {
	case kindInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case kindBool:
		if v.Bool() {
			return append(b, 't')
		}
		return append(b, 'f')
	case kindText:
		return quote(b, v.String())
	case kindTime:
		b = append(b, '"')
		b = v.Addr().Interface().(*time.Time).AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	default: // kindBytes; inside a quoted element a backslash is escaped: "\\x0a0b".
		b = append(b, `"\\x`...)
		b = hex.AppendEncode(b, v.Bytes())
		return append(b, '"')
	}
}

// quote appends s as a double-quoted array element, escaping backslashes and double quotes. Always
// quoting keeps "NULL", "" and texts with commas or braces what they are.
func quote(b []byte, s string) []byte {
	b = append(b, '"')
	if strings.IndexByte(s, '"') < 0 && strings.IndexByte(s, '\\') < 0 {
		b = append(b, s...)
		return append(b, '"')
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// Check returns an error unless the database's function Name takes exactly the call's inputs, with the
// same names, types and order.
func Check[Row, Fixed any](ctx context.Context, q sqlx.QueryerContext, f *Func[Row, Fixed]) error {
	var got []string
	if err := sqlx.SelectContext(ctx, q, &got, `SELECT pg_get_function_arguments(p.oid) FROM pg_proc p
		WHERE p.proname = $1 AND pg_function_is_visible(p.oid)`, f.name); err != nil {
		return err
	}
	switch {
	case len(got) == 0:
		return fmt.Errorf("function %s does not exist", f.name)
	case len(got) > 1:
		return fmt.Errorf("function %s has %d overloads; a call by name needs one", f.name, len(got))
	case got[0] != f.Signature():
		return fmt.Errorf("function %s takes (%s); the call sends (%s)", f.name, got[0], f.Signature())
	}
	return nil
}
