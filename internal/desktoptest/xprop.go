//go:build unix

package desktoptest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// propFormats tells xprop how to print each property this package reads.
// Strings are printed as hex bytes ("8x") because xprop does not escape
// quotes inside strings, which makes its default output ambiguous.
var propFormats = map[string]string{
	"WM_CLASS":                  "8x",
	"WM_NAME":                   "8x",
	"_NET_WM_NAME":              "8x",
	"_NET_WM_PID":               "32x",
	"_NET_FRAME_EXTENTS":        "32x",
	"_NET_ACTIVE_WINDOW":        "32x",
	"_NET_CLIENT_LIST":          "32x",
	"_NET_CLIENT_LIST_STACKING": "32x",
	"_NET_SUPPORTING_WM_CHECK":  "32x",
	"WM_STATE":                  "32x",
	"WM_NORMAL_HINTS":           "32x",
	"_NET_WM_STATE":             "32a",
	"_NET_WM_DESKTOP":           "32x",
}

// prop is one property as xprop printed it; a missing property has no
// entry in the map props returns.
type prop struct {
	typ    string   // e.g. "STRING", "UTF8_STRING", "CARDINAL"
	values []string // one element per item
}

// uints parses the values as hexadecimal (or decimal) numbers.
func (p prop) uints() []uint64 {
	var out []uint64
	for _, v := range p.values {
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// bytes reassembles an 8-bit property printed as hex bytes.
func (p prop) bytes() []byte {
	out := make([]byte, 0, len(p.values))
	for _, v := range p.uints() {
		out = append(out, byte(v))
	}
	return out
}

// text decodes a text property: UTF8_STRING as UTF-8, STRING as Latin-1.
func (p prop) text() string {
	b := bytes.TrimRight(p.bytes(), "\x00")
	if p.typ == "STRING" {
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		return string(rs)
	}
	if !utf8.Valid(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

// props reads properties of a window ("-root" or a window id) with xprop.
func (d *Desktop) props(window string, names ...string) (map[string]prop, error) {
	args := []string{}
	if window == "-root" {
		args = append(args, "-root")
	} else {
		args = append(args, "-id", window)
	}
	for _, n := range names {
		f, ok := propFormats[n]
		if !ok {
			return nil, fmt.Errorf("desktoptest: no xprop format for %s", n)
		}
		args = append(args, "-f", n, f, " = $0+\n")
	}
	args = append(args, names...)
	out, err := d.output(10*time.Second, "xprop", args...)
	if err != nil {
		return nil, err
	}
	return parseProps(out), nil
}

// parseProps parses lines "NAME(TYPE) = v1, v2, ..."; lines for missing
// properties ("NAME:  not found.") are skipped.
func parseProps(out string) map[string]prop {
	m := map[string]prop{}
	for _, line := range strings.Split(out, "\n") {
		head, rest, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		open := strings.IndexByte(head, '(')
		if open < 0 || !strings.HasSuffix(head, ")") {
			continue
		}
		p := prop{typ: head[open+1 : len(head)-1]}
		rest = strings.TrimSpace(rest)
		if rest != "" {
			for _, v := range strings.Split(rest, ",") {
				p.values = append(p.values, strings.TrimSpace(v))
			}
		}
		m[head[:open]] = p
	}
	return m
}

func hexID(id uint32) string { return fmt.Sprintf("0x%x", id) }
