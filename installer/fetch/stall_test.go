package fetch

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stallServer is a loopback TCP server that reads each request and then
// misbehaves as behave says, until the test ends.
type stallServer struct {
	url   string
	conns atomic.Int32
}

func newStallServer(t *testing.T, behave func(conn net.Conn, stop <-chan struct{})) *stallServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallServer{url: "http://" + ln.Addr().String() + "/file"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(stop)
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				behave(conn, stop)
			}()
		}
	}()
	return s
}

// trickle writes s one byte a second until stop.
func trickle(conn net.Conn, s string, stop <-chan struct{}) {
	for i := range len(s) {
		if _, err := conn.Write([]byte{s[i]}); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
	}
	<-stop
}

var stalls = []struct {
	name   string
	behave func(conn net.Conn, stop <-chan struct{})
	says   string
}{
	{"accepts and never answers", func(_ net.Conn, stop <-chan struct{}) { <-stop }, "accepted the connection but sent no response"},
	{"sends its headers at 1 byte/s", func(conn net.Conn, stop <-chan struct{}) {
		trickle(conn, "HTTP/1.1 200 OK\r\nContent-Length: 262144\r\nContent-Type: application/octet-stream\r\n\r\n", stop)
	}, "began its response but did not finish the headers"},
	{"sends its headers and then stalls the body", func(conn net.Conn, stop <-chan struct{}) {
		conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 262144\r\n\r\n"))
		<-stop
	}, "sent its headers (200 OK) but no body"},
}

func stallClient() *Client {
	return New(Options{
		Retries: 3, BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		HeaderTimeout: time.Second, FirstByteTimeout: time.Second,
		// Longer than the deadlines, so that they, not the watchdog,
		// abandon the server.
		MinThroughput: 1, ThroughputWindow: time.Minute, AttemptTimeout: 5 * time.Minute,
	})
}

// A stalled server is abandoned after one attempt's deadline (not retried
// until the overall timeout), with an error that says what it did.
func TestStalledServerIsAbandoned(t *testing.T) {
	for _, tc := range stalls {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, op := range []struct {
				name string
				run  func(url string) error
			}{
				{"Get", func(url string) error { _, err := stallClient().Get(ctx, url, 1<<20); return err }},
				{"Download", func(url string) error {
					return stallClient().Download(ctx, url, filepath.Join(t.TempDir(), "a.tar.gz"), target(payload), nil)
				}},
			} {
				srv := newStallServer(t, tc.behave)
				err := op.run(srv.url)
				if !errors.Is(err, ErrStalled) {
					t.Fatalf("%s from a server that %s = %v, want ErrStalled", op.name, tc.name, err)
				}
				if ctx.Err() != nil {
					t.Fatalf("%s waited for the overall deadline instead of the attempt's", op.name)
				}
				if !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), srv.url) {
					t.Errorf("%s error = %q, want it to name %s and say %q", op.name, err, srv.url, tc.says)
				}
				if n := srv.conns.Load(); n != 1 {
					t.Errorf("%s: the stalled server got %d connections, want 1 (a stall is not retried)", op.name, n)
				}
			}
		})
	}
}

// A server that answers quickly is unaffected by the deadlines, including
// an answer read slowly by the caller after its first byte.
func TestDeadlinesSpareAnsweringServer(t *testing.T) {
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) { serveContent(w, r, payload, etagOf(payload)) })
	c := stallClient()
	partial := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := c.Download(context.Background(), srv.URL, partial, target(payload), func(done, total int64) {
		if done < 4096 {
			time.Sleep(time.Millisecond)
		}
	}); err != nil {
		t.Fatalf("Download from an answering server = %v", err)
	}
	checkFile(t, partial)
}
