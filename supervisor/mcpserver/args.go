package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Size limits on string arguments: far above what a sensible call needs,
// far below what would stall the desktop (typing runs at about a
// millisecond per character) or the helper (1 MiB per request). A string
// argument is at most maxNameBytes long unless its max tag says otherwise:
// typed text 4*maxTypeRunes bytes (checkTypeText counts the characters),
// the clipboard's maxClipboardBytes.
const (
	maxTypeRunes      = 10000
	maxClipboardBytes = 512 * 1024
	maxNameBytes      = 1000
	maxBatchActions   = 100
	maxWait           = 300.0 // seconds, wait and hold_key, as Anthropic's computer toolset allows
	maxScrollAmount   = 100
	maxKeyRepeat      = 100 // presses of one key call, as Anthropic's computer toolset allows
)

// A computer_batch may run at most maxBatchDuration: the sum of its waits
// and holds, batchTypeAllowance per typed character and
// batchStepAllowance per action. One call cannot keep the desktop for
// longer than that, and a batch over it is refused before it starts.
const (
	maxBatchDuration   = 300 * time.Second
	batchStepAllowance = time.Second
	batchTypeAllowance = 5 * time.Millisecond
)

// args is one call's arguments: v points to the tool's argument struct
// (nil for a tool without arguments), decoded; fields are the fields as
// given.
type args struct {
	tool   string
	v      any
	fields map[string]json.RawMessage
}

// eitherForm marks an argument struct that is the union of a tool's
// forms: each form checks its own required fields.
type eitherForm interface{ eitherForm() }

// decodeArgs decodes a tool's arguments object into v, a pointer to its
// argument struct. A field the struct does not name is refused with the
// names it does; a field whose json tag has no omitempty or omitzero is
// required, and its description says what to give; a string is at most
// maxNameBytes long, or the bytes of its max tag.
func (s *Server) decodeArgs(tool string, raw json.RawMessage, v any) (*args, error) {
	a := &args{tool: tool, v: v}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &a.fields); err != nil {
			return nil, fmt.Errorf("the arguments of %s must be a JSON object: %v", tool, err)
		}
	}
	if err := refuseUnknown(tool, a.fields, argNames(v)); err != nil || v == nil {
		return a, err
	}
	rv := reflect.ValueOf(v).Elem()
	for _, f := range reflect.VisibleFields(rv.Type()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !a.has(name) {
			continue
		}
		field, raw := rv.FieldByIndex(f.Index), a.fields[name]
		var bad badValue
		if err := json.Unmarshal(raw, field.Addr().Interface()); errors.As(err, &bad) {
			return nil, fmt.Errorf("%s: %s %s", tool, name, bad)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %q must be %s, got %s", tool, name, expected(f.Type), abbreviate(raw))
		}
		limit := maxNameBytes
		if m := f.Tag.Get("max"); m != "" {
			limit, _ = strconv.Atoi(m)
		}
		if field.Kind() == reflect.String && field.Len() > limit {
			return nil, fmt.Errorf("%s: %q is %d bytes long, over the limit of %d", tool, name, field.Len(), limit)
		}
	}
	if _, union := v.(eitherForm); union {
		return a, nil
	}
	return a, s.need(a, v)
}

// need refuses a call that lacks a required field of the argument struct
// v (one without omitempty or omitzero), saying what to give from its
// description.
func (s *Server) need(a *args, v any) error {
	for _, f := range reflect.VisibleFields(reflect.Indirect(reflect.ValueOf(v)).Type()) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && !strings.Contains(opts, "omit") && !a.has(name) {
			what := strings.TrimSuffix(s.placeholders().Replace(f.Tag.Get("jsonschema")), ".")
			if what != "" {
				what = strings.ToLower(what[:1]) + what[1:]
			}
			return a.missing(name, what)
		}
	}
	return nil
}

// refuseUnknown refuses fields other than allowed, naming those.
func refuseUnknown(tool string, fields map[string]json.RawMessage, allowed []string) error {
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	accepted := "no arguments"
	if len(allowed) > 0 {
		accepted = "only " + strings.Join(quoteAll(allowed), ", ")
	}
	return fmt.Errorf("%s does not take %s; it accepts %s", tool, strings.Join(quoteAll(unknown), ", "), accepted)
}

// badValue is an argument of the right shape whose value is wrong: "-1 is
// out of range: …", after the field's name.
type badValue string

func (b badValue) Error() string { return string(b) }

// expected says what shape a field's type takes.
func expected(t reflect.Type) string {
	if e, ok := reflect.Zero(t).Interface().(interface{ expected() string }); ok {
		return e.expected()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return "a list of objects"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// has reports whether the field is present and not null.
func (a *args) has(name string) bool {
	v, ok := a.fields[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func (a *args) missing(name, what string) error {
	return fmt.Errorf("%s needs %q: %s", a.tool, name, what)
}

// num is a number argument, set when given; models sometimes quote
// numbers ("2.5").
type num struct {
	v   float64
	set bool
}

func (n *num) UnmarshalJSON(b []byte) error {
	v, err := parseNumber(b)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return badValue(fmt.Sprintf("%v is not a finite number", v))
	}
	n.v, n.set = v, err == nil
	return err
}

func (num) expected() string { return "a number" }

// or returns the number as a whole one, def when not given.
func (n num) or(def int) int {
	if !n.set {
		return def
	}
	return int(n.v)
}

// within decodes a number in [lo, hi], whole when asked; what names the
// unit in the refusal.
func (n *num) within(b []byte, lo, hi float64, whole bool, what string) error {
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	if n.v < lo || n.v > hi || (whole && n.v != math.Trunc(n.v)) {
		if whole {
			what = "a whole number of " + what
		}
		return badValue(fmt.Sprintf("%v is out of range: give %s from %g to %g", n.v, what, lo, hi))
	}
	return nil
}

func parseNumber(raw json.RawMessage) (float64, error) {
	var v float64
	if err := json.Unmarshal(raw, &v); err == nil {
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("not a number")
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

// point and region are coordinates, nil when not given. Besides a JSON
// array of numbers they take the same array written as a string ("[640,
// 400]" or "640,400"), a form models sometimes send. NaN and infinities
// are kept, for the geometry to reject with the valid range.
type (
	point  struct{ xy []float64 } // [x, y]
	region struct{ xy []float64 } // [x0, y0, x1, y1]
)

func (p *point) UnmarshalJSON(b []byte) (err error)  { p.xy, err = parseCoords(b, 2); return err }
func (r *region) UnmarshalJSON(b []byte) (err error) { r.xy, err = parseCoords(b, 4); return err }
func (point) expected() string                       { return "[x, y], 2 numbers" }
func (region) expected() string                      { return "[x0, y0, x1, y1], 4 numbers" }

func parseCoords(raw []byte, n int) ([]float64, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, err
		}
		s = strings.TrimSpace(s)
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
		parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		elems = nil
		for _, p := range parts {
			elems = append(elems, json.RawMessage(strconv.Quote(p)))
		}
	}
	if len(elems) != n {
		return nil, errors.New("wrong length")
	}
	out := make([]float64, n)
	for i, e := range elems {
		v, err := parseNumber(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// abbreviate quotes a raw JSON value for an error message, shortened.
func abbreviate(raw json.RawMessage) string {
	const limit = 60
	s := string(bytes.TrimSpace(raw))
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// checkTypeText rejects text the keyboard cannot type: control characters
// other than newline, carriage return and tab, and text over the limit.
func checkTypeText(tool, text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("%s: the text is not valid UTF-8", tool)
	}
	n := 0
	for i, r := range text {
		n++
		if r == utf8.RuneError {
			// The input layer cannot tell it from a decoding error.
			return fmt.Errorf("%s: character %d of the text is U+FFFD (the replacement character), which cannot be typed; it usually stands for text that was not valid UTF-8", tool, n)
		}
		if (r < 0x20 && r != '\n' && r != '\r' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%s: character %d of the text (byte %d) is the control character U+%04X, which no key types; use key for keys such as Escape or BackSpace", tool, n, i, r)
		}
	}
	if n > maxTypeRunes {
		return fmt.Errorf("%s: the text is %d characters long, over the limit of %d per call; type it in parts, or put it on the clipboard with write_clipboard and paste it with key ctrl+v", tool, n, maxTypeRunes)
	}
	return nil
}
