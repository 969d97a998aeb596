package input

import (
	"testing"
	"time"
)

func TestSetClickPress(t *testing.T) {
	in := New(nil)
	if got := in.clickHold(); got != DefaultClickPress {
		t.Errorf("unset: %v, want %v", got, DefaultClickPress)
	}
	for _, d := range []time.Duration{0, 8 * time.Millisecond, MaxClickPress} {
		if err := in.SetClickPress(d); err != nil {
			t.Fatalf("SetClickPress(%v): %v", d, err)
		}
		if got := in.clickHold(); got != d {
			t.Errorf("after SetClickPress(%v): %v", d, got)
		}
	}
	for _, d := range []time.Duration{-time.Millisecond, MaxClickPress + 1} {
		if err := in.SetClickPress(d); err == nil {
			t.Errorf("SetClickPress(%v) accepted", d)
		}
	}
}
