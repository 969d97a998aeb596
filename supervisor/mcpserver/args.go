package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Size limits on string arguments: far above what a sensible call needs,
// far below what would stall the desktop (typing runs at about a
// millisecond per character) or the helper (1 MiB per request).
const (
	maxTypeRunes      = 10000
	maxKeyBytes       = 1000
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

// args holds one tool call's arguments, decoded lazily so each field can
// fail with a message about that field.
type args struct {
	tool   string
	fields map[string]json.RawMessage
	used   map[string]bool
}

// decodeArgs parses a tool's arguments object. allowed lists the fields the
// tool accepts; any other field is an error naming the allowed ones.
func decodeArgs(tool string, raw json.RawMessage, allowed []string) (*args, error) {
	a := &args{tool: tool, fields: map[string]json.RawMessage{}, used: map[string]bool{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &a.fields); err != nil {
			return nil, fmt.Errorf("the arguments of %s must be a JSON object: %v", tool, err)
		}
	}
	var unknown []string
	for k := range a.fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		accepted := "no arguments"
		if len(allowed) > 0 {
			accepted = "only " + strings.Join(quoteAll(allowed), ", ")
		}
		return nil, fmt.Errorf("%s does not take %s; it accepts %s", tool, strings.Join(quoteAll(unknown), ", "), accepted)
	}
	return a, nil
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

// str returns a string field; required fields fail when absent. maxBytes
// bounds its length.
func (a *args) str(name string, required bool, maxBytes int, what string) (string, bool, error) {
	if !a.has(name) {
		if required {
			return "", false, a.missing(name, what)
		}
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(a.fields[name], &s); err != nil {
		return "", false, fmt.Errorf("%s: %q must be a string (%s), got %s", a.tool, name, what, abbreviate(a.fields[name]))
	}
	if len(s) > maxBytes {
		return "", false, fmt.Errorf("%s: %q is %d bytes long, over the limit of %d", a.tool, name, len(s), maxBytes)
	}
	return s, true, nil
}

// number returns a numeric field; numeric strings such as "2.5" are
// accepted too, as models sometimes quote numbers.
func (a *args) number(name string, required bool, what string) (float64, bool, error) {
	if !a.has(name) {
		if required {
			return 0, false, a.missing(name, what)
		}
		return 0, false, nil
	}
	v, err := parseNumber(a.fields[name])
	if err != nil {
		return 0, false, fmt.Errorf("%s: %q must be a number (%s), got %s", a.tool, name, what, abbreviate(a.fields[name]))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("%s: %q is %v, not a finite number (%s)", a.tool, name, v, what)
	}
	return v, true, nil
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

// coordinates returns an [x, y] (n == 2) or [x0, y0, x1, y1] (n == 4)
// field. Besides a JSON array of numbers it accepts the same array written
// as a string ("[640, 400]" or "640,400"), a form models sometimes send.
// NaN and infinities are returned as such, for the geometry to reject with
// the valid range.
func (a *args) coordinates(name string, n int, required bool, what string) ([]float64, bool, error) {
	if !a.has(name) {
		if required {
			return nil, false, a.missing(name, what)
		}
		return nil, false, nil
	}
	raw := a.fields[name]
	shape := "[x, y]"
	if n == 4 {
		shape = "[x0, y0, x1, y1]"
	}
	bad := func() error {
		return fmt.Errorf("%s: %q must be %s, %d numbers (%s); got %s", a.tool, name, shape, n, what, abbreviate(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, bad()
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
		return nil, false, bad()
	}
	out := make([]float64, n)
	for i, e := range elems {
		v, err := parseNumber(e)
		if err != nil {
			return nil, false, bad()
		}
		out[i] = v
	}
	return out, true, nil
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
