package proctail

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestTailLogsLinesAndKeepsTheEnd(t *testing.T) {
	var logged bytes.Buffer
	w := New(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if got := w.String(); got != "(no output)" {
		t.Errorf("String before any output = %q", got)
	}
	w.Write([]byte("first li"))
	w.Write([]byte("ne\n\n  second line  \npartial"))
	if got := logged.String(); !strings.Contains(got, `msg="first line"`) || !strings.Contains(got, `msg="second line"`) || strings.Contains(got, "partial") {
		t.Errorf("logged %q, want the two complete lines only", got)
	}
	w.Write(bytes.Repeat([]byte("x"), 3*Max))
	if got := w.String(); len(got) != Max || strings.Trim(got, "x") != "" {
		t.Errorf("String after %d bytes kept %d bytes (%.20q…), want the last %d", 3*Max, len(got), got, Max)
	}
	if len(w.line) != 0 {
		t.Errorf("a %d-byte line without a newline is held (%d bytes), want it dropped", 3*Max, len(w.line))
	}
}
