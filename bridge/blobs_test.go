package bridge

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestLiftedCaptureDecodes decodes a capture whose image was lifted out of
// the frame, as the client does, and checks it against the plain decode.
func TestLiftedCaptureDecodes(t *testing.T) {
	img := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{1, 2, 250, 7, 0, 99}, 3*liftMinBytes)...)
	b64 := base64.StdEncoding.EncodeToString(img)
	tests := []struct {
		name, data string
	}{
		{"plain literal", b64},
		// JSON may escape a slash; the helper does not, but the decode
		// must still be right.
		{"escaped slashes", strings.ReplaceAll(b64, "/", `\/`)},
		// Go's decoder skips line breaks; the text then is not the
		// image's exact encoding and must not be passed on as it is.
		{"line breaks", b64[:64] + `\r\n` + b64[64:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			result := `{"format":"jpeg","data":"` + tt.data + `","width":3,"height":2,"source":{"x":0,"y":0,"width":6,"height":4},"display":1,"masked":[],"method":"shm","capture_id":9}`
			store := newBlobStore()
			small := store.lift([]byte(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`))
			var frame struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(small, &frame); err != nil {
				t.Fatalf("decoding the lifted frame: %v", err)
			}
			blobs := store.claim(frame.Result)
			if len(blobs) != 1 || len(store.blobs) != 0 {
				t.Fatalf("claim took %d strings and left %d, want 1 and 0", len(blobs), len(store.blobs))
			}
			got, err := decodeCaptureFrom(frame.Result, blobs)
			if err != nil {
				t.Fatalf("decodeCaptureFrom: %v", err)
			}
			want, err := decodeCaptureFrom([]byte(result), nil)
			if err != nil {
				t.Fatalf("decodeCaptureFrom: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lifted decode differs from the plain one (-plain +lifted):\n%s", diff)
			}
			if !bytes.Equal(got.Data, img) {
				t.Errorf("decoded %d bytes, want the %d image bytes", len(got.Data), len(img))
			}
			// The text kept to pass on is the image's exact base64, or none.
			if got.Base64 != nil && string(got.Base64) != b64 {
				t.Errorf("Base64 is %d characters that are not the image's encoding", len(got.Base64))
			}
			if wantText := !strings.Contains(tt.data, `\r\n`); (got.Base64 != nil) != wantText {
				t.Errorf("Base64 kept = %v, want %v", got.Base64 != nil, wantText)
			}
		})
	}
}
