package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// match checks actual against a transcript pattern
// (helpers/testdata/transcripts/README.md) and names the first mismatch.
func match(pattern, actual any, path string) error {
	fail := func(want string) error { return fmt.Errorf("%s: want %s, got %s", path, want, shorten(actual)) }
	switch p := pattern.(type) {
	case string:
		if strings.HasPrefix(p, "$$") {
			if actual != p[1:] {
				return fail(fmt.Sprintf("%q", p[1:]))
			}
			return nil
		}
		if !strings.HasPrefix(p, "$") {
			if actual != p {
				return fail(fmt.Sprintf("%q", p))
			}
			return nil
		}
		isInt := func(v any) bool { f, ok := v.(float64); return ok && f == float64(int64(f)) }
		var ok bool
		switch p {
		case "$int":
			ok = isInt(actual)
		case "$number":
			_, ok = actual.(float64)
		case "$string":
			_, ok = actual.(string)
		case "$bool":
			_, ok = actual.(bool)
		case "$null":
			ok = actual == nil
		case "$any":
			ok = true
		case "$object":
			_, ok = actual.(map[string]any)
		case "$array":
			_, ok = actual.([]any)
		case "$int_or_null":
			ok = actual == nil || isInt(actual)
		case "$string_or_null":
			_, s := actual.(string)
			ok = actual == nil || s
		case "$object_or_null":
			_, o := actual.(map[string]any)
			ok = actual == nil || o
		case "$base64":
			s, _ := actual.(string)
			_, err := base64.StdEncoding.DecodeString(s)
			ok = s != "" && err == nil
		default:
			return fmt.Errorf("%s: unknown matcher %q in the pattern", path, p)
		}
		if !ok {
			return fail(p)
		}
		return nil
	case map[string]any:
		if each, ok := p["$each"]; ok && len(p) == 1 {
			items, ok := actual.([]any)
			if !ok {
				return fail("an array")
			}
			for i, item := range items {
				if err := match(each, item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			return nil
		}
		a, ok := actual.(map[string]any)
		if !ok {
			return fail("an object")
		}
		for k, sub := range p {
			v, ok := a[k]
			if !ok {
				return fmt.Errorf("%s: missing key %q in %s", path, k, shorten(actual))
			}
			if err := match(sub, v, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(p) {
			return fail(fmt.Sprintf("an array of %d items", len(p)))
		}
		for i := range p {
			if err := match(p[i], a[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	default:
		if pattern != actual {
			return fail(fmt.Sprint(pattern))
		}
		return nil
	}
}

func shorten(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func TestMatch(t *testing.T) {
	actual := map[string]any{"id": 3.0, "result": map[string]any{"data": "aGVsbG8=", "n": 2.5, "list": []any{1.0, 2.0}, "s": "$x", "none": nil}}
	good := []any{
		map[string]any{"id": 3.0},
		map[string]any{"result": map[string]any{"data": "$base64", "n": "$number", "list": []any{1.0, "$int"}, "none": "$null"}},
		map[string]any{"result": map[string]any{"list": map[string]any{"$each": "$int"}, "s": "$$x", "none": "$int_or_null"}},
	}
	for _, p := range good {
		if err := match(p, actual, "$"); err != nil {
			t.Errorf("match(%v) = %v, want a match", p, err)
		}
	}
	bad := []any{
		map[string]any{"id": 4.0},
		map[string]any{"missing": "$any"},
		map[string]any{"result": map[string]any{"n": "$int"}},
		map[string]any{"result": map[string]any{"s": "$x"}},
		map[string]any{"result": map[string]any{"none": "$object"}},
	}
	for _, p := range bad {
		if match(p, actual, "$") == nil {
			t.Errorf("match(%v) matched, want a mismatch", p)
		}
	}
}
