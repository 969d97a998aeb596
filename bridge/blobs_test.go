package bridge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestLiftRestoreRoundTrip(t *testing.T) {
	long := strings.Repeat("QUJD", liftMinBytes)
	escaped := strings.Repeat(`a\"b\\`, liftMinBytes/4)
	tests := []struct {
		name     string
		body     string
		wantLift int // strings lifted
	}{
		{"small body untouched", `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`, 0},
		{"capture data lifted", `{"jsonrpc":"2.0","id":2,"result":{"format":"jpeg","data":"` + long + `","width":3}}`, 1},
		{"two long strings", `{"id":3,"result":{"a":"` + long + `","b":["` + long + `"]}}`, 2},
		{"escaped quotes stay inside the string", `{"id":4,"result":{"text":"` + escaped + `","n":1}}`, 1},
		{"long key-free array of short strings", `{"id":5,"result":[` + strings.Repeat(`"x",`, liftMinBytes) + `"y"]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newBlobStore()
			small := store.lift([]byte(tt.body))
			if got := len(store.blobs); got != tt.wantLift {
				t.Errorf("lift lifted %d strings, want %d", got, tt.wantLift)
			}
			if !json.Valid(small) {
				t.Fatalf("lift(%.60q…) = %.200q…, not valid JSON", tt.body, small)
			}
			if tt.wantLift > 0 && len(small) >= len(tt.body) {
				t.Errorf("lift did not shrink the body: %d bytes from %d", len(small), len(tt.body))
			}
			if got := store.restore(small); !bytes.Equal(got, []byte(tt.body)) {
				t.Errorf("restore(lift(body)) differs from body")
			}
			if len(store.blobs) != 0 {
				t.Errorf("restore left %d strings behind", len(store.blobs))
			}
		})
	}
}

func TestLiftForgetsUnclaimedStrings(t *testing.T) {
	store := newBlobStore()
	body := []byte(`{"data":"` + strings.Repeat("A", liftMinBytes) + `"}`)
	for i := 0; i < keepFrames+3; i++ {
		store.lift(body)
	}
	if n := len(store.blobs); n > keepFrames+1 {
		t.Errorf("after %d unclaimed frames the store holds %d strings, want at most %d", keepFrames+3, n, keepFrames+1)
	}
}

func TestRestoreLeavesForeignTokens(t *testing.T) {
	store := newBlobStore()
	raw := []byte(`{"text":"` + store.prefix + `99"}`)
	if got := store.restore(raw); !bytes.Equal(got, raw) {
		t.Errorf("restore(%s) = %s, want it unchanged", raw, got)
	}
}

// FuzzLiftRestore checks that lifting and restoring gives back the frame
// body exactly, and that a lifted JSON body is still JSON.
func FuzzLiftRestore(f *testing.F) {
	f.Add([]byte(`{"result":{"data":"` + strings.Repeat("QUJD", liftMinBytes/2) + `"}}`))
	f.Add([]byte(`{"result":"` + strings.Repeat(`\\\"`, liftMinBytes/3) + `"}`))
	f.Add([]byte(`"` + strings.Repeat("x", liftMinBytes)))
	f.Add([]byte(strings.Repeat(`"`, liftMinBytes+1)))
	f.Fuzz(func(t *testing.T, body []byte) {
		store := newBlobStore()
		small := store.lift(body)
		if json.Valid(body) && !json.Valid(small) {
			t.Fatalf("lift made valid JSON invalid")
		}
		if got := store.restore(small); !bytes.Equal(got, body) {
			t.Fatalf("restore(lift(body)) differs from body")
		}
	})
}
