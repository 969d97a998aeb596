package lock

import "testing"

// parseStat reads /proc, so its test is Linux-only like it.

func TestParseStat(t *testing.T) {
	line := "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	state, got, err := parseStat([]byte(line))
	if err != nil || got != 987654 || state != 'S' {
		t.Fatalf("parseStat = %c %d, %v; want S 987654", state, got, err)
	}
	if _, _, err := parseStat([]byte("1 (x) S 1 2")); err == nil {
		t.Errorf("parseStat of a short line: no error")
	}
}
