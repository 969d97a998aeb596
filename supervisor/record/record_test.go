package record

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestRedactHidesTextAtAnyDepth(t *testing.T) {
	in := `{"text":"pässword","coordinate":[1,2],"actions":[{"action":"type","text":"abc"},{"action":"key","text":"ctrl+a"}],"value":{"x":"deep"},"keys":["ctrl","c"]}`
	got := string(Redact(json.RawMessage(in)))
	for _, leak := range []string{"pässword", "abc", "deep"} {
		if strings.Contains(got, leak) {
			t.Errorf("Redact(%s) = %s, still has %q", in, got, leak)
		}
	}
	for _, keep := range []string{`"coordinate":[1,2]`, `"keys":["ctrl","c"]`, `[redacted: 8 characters]`} {
		if !strings.Contains(got, keep) {
			t.Errorf("Redact(%s) = %s, want %s kept", in, got, keep)
		}
	}
	if got := string(Redact(json.RawMessage(`not json`))); strings.Contains(got, "not json") {
		t.Errorf("Redact(not json) = %s", got)
	}
}

func TestLogRotatesAtItsCap(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, false, 300)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := l.Write(Entry{Tool: "screenshot", Result: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	cur, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	prev, err := os.ReadFile(PreviousPath(l.Path()))
	if err != nil {
		t.Fatalf("no previous record after rotation: %v", err)
	}
	if len(cur) > 300 || len(prev) > 300 {
		t.Errorf("record files are %d and %d bytes, over the 300-byte cap", len(cur), len(prev))
	}
	if n := strings.Count(string(cur), "\n") + strings.Count(string(prev), "\n"); n == 0 || n > 10 {
		t.Errorf("%d lines kept across the two files", n)
	}
}
