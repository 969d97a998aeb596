package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testClient() *Client {
	return New(Options{
		Retries: 2, BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		AttemptTimeout: 5 * time.Second, MinThroughput: 4096, ThroughputWindow: 200 * time.Millisecond,
	})
}

var payload = func() []byte {
	b := make([]byte, 256<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

func target(b []byte) Target {
	sum := sha256.Sum256(b)
	return Target{Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
}

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:6]) + `"`
}

// recorder is a server whose handler sees the request number.
type recorder struct {
	mu     sync.Mutex
	ranges []string
	ifs    []string
}

func serve(t *testing.T, h func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *recorder) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.ranges = append(rec.ranges, r.Header.Get("Range"))
		rec.ifs = append(rec.ifs, r.Header.Get("If-Range"))
		n := len(rec.ranges)
		rec.mu.Unlock()
		h(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// cutAfter sends the first k bytes of data as if it were sending all of
// it, then drops the connection.
func cutAfter(w http.ResponseWriter, data []byte, k int, etag string) {
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.Write(data[:k])
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

func serveContent(w http.ResponseWriter, r *http.Request, data []byte, etag string) {
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

func download(t *testing.T, url string) (string, error) {
	partial := filepath.Join(t.TempDir(), "a.tar.gz")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return partial, testClient().Download(ctx, url, partial, target(payload), nil)
}

func checkFile(t *testing.T, path string) {
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("downloaded file: %d bytes (err %v), want the %d payload bytes", len(got), err, len(payload))
	}
}

func TestDownloadResumesWithRange(t *testing.T) {
	cut := 100_000
	srv, rec := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			cutAfter(w, payload, cut, etagOf(payload))
		}
		serveContent(w, r, payload, etagOf(payload))
	})
	path, err := download(t, srv.URL)
	if err != nil {
		t.Fatalf("Download = %v", err)
	}
	checkFile(t, path)
	if want := []string{"", fmt.Sprintf("bytes=%d-", cut)}; fmt.Sprint(rec.ranges) != fmt.Sprint(want) {
		t.Errorf("Range headers = %q, want %q", rec.ranges, want)
	}
	if rec.ifs[1] != etagOf(payload) {
		t.Errorf("If-Range = %q, want the ETag %q", rec.ifs[1], etagOf(payload))
	}
}

func TestDownloadRestartsFromZero(t *testing.T) {
	cut := 100_000
	for _, tc := range []struct {
		name   string
		second func(w http.ResponseWriter, r *http.Request)
		// wantRequests is how many requests the download takes.
		wantRequests int
	}{
		{"server ignores Range", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", etagOf(payload))
			w.Write(payload) // 200 with the whole file
		}, 2},
		{"ETag changed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"something-else"`)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", cut, len(payload)-1, len(payload)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(bytes.Repeat([]byte{'Z'}, len(payload)-cut))
		}, 3},
		{"wrong Content-Range start", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", etagOf(payload))
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", cut-10, len(payload)-1, len(payload)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(payload[cut-10:])
		}, 3},
		{"wrong Content-Range total", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", etagOf(payload))
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", cut, len(payload)-1, len(payload)+5))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(payload[cut:])
		}, 3},
		{"416", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
				switch n {
				case 1:
					cutAfter(w, payload, cut, etagOf(payload))
				case 2:
					tc.second(w, r)
				default:
					serveContent(w, r, payload, etagOf(payload))
				}
			})
			path, err := download(t, srv.URL)
			if err != nil {
				t.Fatalf("Download = %v", err)
			}
			checkFile(t, path) // never appended: exactly the payload
			if len(rec.ranges) != tc.wantRequests {
				t.Errorf("%d requests (Range %q), want %d", len(rec.ranges), rec.ranges, tc.wantRequests)
			}
			if tc.wantRequests == 3 && rec.ranges[2] != "" {
				t.Errorf("third request had Range %q, want a fresh start without Range", rec.ranges[2])
			}
		})
	}
}

func TestDownloadResumesAcrossRuns(t *testing.T) {
	srv, rec := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
		serveContent(w, r, payload, etagOf(payload))
	})
	partial := filepath.Join(t.TempDir(), "a.tar.gz")
	os.WriteFile(partial, payload[:5000], 0o600)
	os.WriteFile(partial+".meta", []byte(fmt.Sprintf(`{"url":%q,"etag":%q}`, srv.URL, etagOf(payload))), 0o600)
	if err := testClient().Download(context.Background(), srv.URL, partial, target(payload), nil); err != nil {
		t.Fatal(err)
	}
	checkFile(t, partial)
	if rec.ranges[0] != "bytes=5000-" {
		t.Errorf("Range = %q, want bytes=5000-", rec.ranges[0])
	}
	if _, err := os.Stat(partial + ".meta"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("download state left behind after success")
	}

	// A partial from another URL is not trusted: start over.
	os.WriteFile(partial, payload[:5000], 0o600)
	os.WriteFile(partial+".meta", []byte(`{"url":"http://elsewhere/","etag":"\"x\""}`), 0o600)
	rec.ranges = nil
	if err := testClient().Download(context.Background(), srv.URL, partial, target(payload), nil); err != nil {
		t.Fatal(err)
	}
	checkFile(t, partial)
	if rec.ranges[0] != "" {
		t.Errorf("Range = %q for a partial from another server, want none", rec.ranges[0])
	}
}

func TestDownloadRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    func(w http.ResponseWriter, r *http.Request)
		want error
	}{
		{"flipped byte", func(w http.ResponseWriter, r *http.Request) {
			bad := bytes.Clone(payload)
			bad[7] ^= 1
			w.Write(bad)
		}, ErrMismatch},
		{"longer, no Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Write(payload)
			w.(http.Flusher).Flush()
			w.Write([]byte("more"))
		}, ErrTooLarge},
		{"longer, honest Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(payload)+4))
			w.Write(append(bytes.Clone(payload), "more"...))
		}, ErrTooLarge},
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, ErrStatus},
		{"stalls at 1 byte/s", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(payload)))
			for i := 0; i < 20; i++ {
				if _, err := w.Write(payload[i : i+1]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(time.Second):
				}
			}
		}, ErrTooSlow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) { tc.h(w, r) })
			start := time.Now()
			path, err := download(t, srv.URL)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Download = %v, want %v", err, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.want == ErrMismatch || tc.want == ErrTooLarge {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a rejected download was left at %s", path)
				}
			}
		})
	}
}

func TestGet(t *testing.T) {
	t.Run("cap without Content-Length", func(t *testing.T) {
		srv, _ := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			for range 100 {
				if _, err := w.Write(bytes.Repeat([]byte("x"), 1<<20)); err != nil {
					return
				}
			}
		})
		start := time.Now()
		if _, err := testClient().Get(context.Background(), srv.URL, 1<<20); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Get(100 MB) = %v, want ErrTooLarge", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("refusing a 100 MB body took %v", d)
		}
	})
	t.Run("Retry-After 86400 is capped", func(t *testing.T) {
		srv, rec := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n < 3 {
				w.Header().Set("Retry-After", "86400")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Write([]byte("ok"))
		})
		start := time.Now()
		body, err := testClient().Get(context.Background(), srv.URL, 100)
		if err != nil || string(body) != "ok" {
			t.Fatalf("Get = %q, %v", body, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Get after two Retry-After: 86400 took %v, want about two capped backoffs", d)
		}
		if len(rec.ranges) != 3 {
			t.Errorf("%d requests, want 3", len(rec.ranges))
		}
	})
	t.Run("500 gives up after the retries", func(t *testing.T) {
		srv, rec := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
		if _, err := testClient().Get(context.Background(), srv.URL, 100); err == nil || !strings.Contains(err.Error(), "giving up after 3") {
			t.Errorf("Get(500) = %v, want giving up after 3 attempts", err)
		}
		if len(rec.ranges) != 3 {
			t.Errorf("%d requests, want 3", len(rec.ranges))
		}
	})
}

func TestBackoff(t *testing.T) {
	c := New(Options{BackoffMin: 100 * time.Millisecond, BackoffMax: 2 * time.Second})
	for attempt := range 10 {
		d := c.backoff(100*time.Millisecond, 2*time.Second, attempt, nil)
		if d < 50*time.Millisecond || d > 2*time.Second {
			t.Errorf("backoff(attempt %d) = %v, want within [50ms, 2s]", attempt, d)
		}
	}
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"1", time.Second},
		{"86400", 2 * time.Second},
		{time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat), 2 * time.Second},
	} {
		resp := &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {tc.header}}, Request: httptest.NewRequest("GET", "http://x/", nil)}
		if got := c.backoff(100*time.Millisecond, 2*time.Second, 0, resp); got != tc.want {
			t.Errorf("backoff(Retry-After: %s) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
