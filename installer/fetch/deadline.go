package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// deadlineTransport gives each round trip (each attempt, each redirect
// hop) a header deadline and a first-body-byte deadline, and reports a
// missed one as ErrStalled with what the server did until then.
type deadlineTransport struct {
	rt        http.RoundTripper
	header    time.Duration
	firstByte time.Duration
}

func (d *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	var connected, answering, fired atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { connected.Store(true) },
		GotFirstResponseByte: func() { answering.Store(true) },
	})
	timer := time.AfterFunc(d.header, func() { fired.Store(true); cancel() })
	resp, err := d.rt.RoundTrip(req.WithContext(ctx))
	timer.Stop()
	if fired.Load() {
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
		var what string
		switch {
		case answering.Load():
			what = "began its response but did not finish the headers"
		case connected.Load():
			what = "accepted the connection but sent no response"
		default:
			what = "did not accept a connection"
		}
		return nil, &stallError{fmt.Sprintf("%s %s within %v", req.URL.Redacted(), what, d.header)}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	fb := &firstByteBody{rc: resp.Body, cancel: cancel, status: resp.Status, limit: d.firstByte, url: req.URL.Redacted()}
	fb.timer = time.AfterFunc(d.firstByte, func() { fb.fired.Store(true); cancel() })
	resp.Body = fb
	return resp, nil
}

// firstByteBody ends the request when no body byte arrives within its
// limit of the headers.
type firstByteBody struct {
	rc     io.ReadCloser
	cancel context.CancelFunc
	timer  *time.Timer
	fired  atomic.Bool
	got    bool
	status string
	limit  time.Duration
	url    string
}

func (b *firstByteBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if !b.got && (n > 0 || err == io.EOF) {
		b.got = true
		if !b.timer.Stop() && b.fired.Load() && n == 0 {
			return 0, b.stalled()
		}
	}
	if err != nil && err != io.EOF && !b.got && b.fired.Load() {
		return n, b.stalled()
	}
	return n, err
}

func (b *firstByteBody) stalled() error {
	return &stallError{fmt.Sprintf("%s sent its headers (%s) but no body within %v", b.url, b.status, b.limit)}
}

// stallError is ErrStalled with what the server did; a type of its own
// so that do can unwrap it from the HTTP client's wrapping.
type stallError struct{ what string }

func (e *stallError) Error() string        { return ErrStalled.Error() + ": " + e.what }
func (e *stallError) Is(target error) bool { return target == ErrStalled }

func (b *firstByteBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel()
	return err
}
