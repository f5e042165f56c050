package jsonbody

// Reader reads a body's members and keeps the first refusal: once a member is refused, every later read
// is skipped. A handler reads one member a line, in the order the interface lists its rules, and asks
// Err once at the end.
//
// Each read takes the member's Value and the error that refuses it (an *apierr.Error with the
// documented message, or a domain error the error table words): a member that was not sent reads as
// absent (ok false) and is not refused; one of another JSON type, or one that a valid function refuses,
// is.
type Reader struct {
	err error
}

// Err is the first refusal (nil when every member was read).
func (r *Reader) Err() error { return r.err }

// Check refuses with refusal unless ok (or an earlier member was refused), and reports whether reading
// goes on.
func (r *Reader) Check(ok bool, refusal error) bool {
	if r.err == nil && !ok {
		r.err = refusal
	}
	return r.err == nil
}

// String reads a JSON string member.
func (r *Reader) String(v Value, refusal error, valid ...func(string) bool) (string, bool) {
	return read(r, v, Value.Str, refusal, valid)
}

// Bool reads a JSON boolean member.
func (r *Reader) Bool(v Value, refusal error) (bool, bool) {
	return read(r, v, Value.Bool, refusal, nil)
}

// Int reads a JSON integer member (one beyond int64 reads as the nearest int64: see Value.Int).
func (r *Reader) Int(v Value, refusal error, valid ...func(int64) bool) (int64, bool) {
	return read(r, v, Value.Int, refusal, valid)
}

// Number reads a JSON number member as its literal text.
func (r *Reader) Number(v Value, refusal error) (string, bool) {
	return read(r, v, Value.Number, refusal, nil)
}

// ID reads a record id, sent as a number or a numeric string.
func (r *Reader) ID(v Value, refusal error) (int64, bool) {
	return read(r, v, Value.ID, refusal, nil)
}

// Strings reads a JSON array of strings.
func (r *Reader) Strings(v Value, refusal error) ([]string, bool) {
	return read(r, v, Value.Strings, refusal, nil)
}

func read[T any](r *Reader, v Value, as func(Value) (T, bool), refusal error, valid []func(T) bool) (T, bool) {
	var zero T
	if r.err != nil || !v.Sent() {
		return zero, false
	}
	t, ok := as(v)
	for _, f := range valid {
		ok = ok && f(t)
	}
	if !r.Check(ok, refusal) {
		return zero, false
	}
	return t, true
}

// Ptr is a read member as a pointer: nil when it was absent or refused.
func Ptr[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}
