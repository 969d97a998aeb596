// Package fetch downloads release manifests and archives over HTTP for the
// installer, with the defences a download that ends up running on the
// user's desktop needs: retries through go-retryablehttp with a capped
// exponential backoff that ignores an absurd Retry-After, a deadline on
// every attempt, header and first-byte deadlines that abandon a server
// which accepts a connection and then stalls (without retrying it, so the
// next mirror is tried within seconds), a minimum-throughput watchdog that
// abandons a server trickling bytes, hard caps on every body, and resumable downloads that
// restart from zero (never append) whenever the server's answer to a Range
// request cannot be trusted to continue the same bytes.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/go-retryablehttp"
)

// Errors, wrapped with the detail; test with errors.Is.
var (
	// ErrTooLarge means a body is (or says it is) over its cap: larger
	// than the manifest declared for an archive, or over the cap for a
	// manifest.
	ErrTooLarge = errors.New("response body over its size cap")
	// ErrTooSlow means the server sent less than the minimum throughput
	// over a whole watchdog window.
	ErrTooSlow = errors.New("download too slow")
	// ErrMismatch means a completed download does not have the declared
	// SHA-256.
	ErrMismatch = errors.New("download does not match its declared SHA-256")
	// ErrStatus means the server answered with an HTTP status that is
	// not a success.
	ErrStatus = errors.New("unexpected HTTP status")
	// ErrStalled means the server missed a deadline of one attempt: it
	// did not finish its response headers within Options.HeaderTimeout,
	// or sent no body byte within Options.FirstByteTimeout after them.
	// A stalled request is not retried: the next URL is tried instead.
	ErrStalled = errors.New("server stalled")
)

// Defaults for the zero values of Options.
const (
	DefaultRetries          = 3
	DefaultBackoffMin       = 250 * time.Millisecond
	DefaultBackoffMax       = 8 * time.Second
	DefaultAttemptTimeout   = 5 * time.Minute
	DefaultHeaderTimeout    = 15 * time.Second
	DefaultFirstByteTimeout = 15 * time.Second
	DefaultMinThroughput    = 2048 // bytes per second
	DefaultThroughputWindow = 20 * time.Second
	DefaultMaxResumes       = 8
	DefaultProjectedLimit   = 2 * time.Minute
)

// Options configure a Client; zero fields take the defaults above.
type Options struct {
	// Logger receives retries and restarts; nil discards them.
	Logger *slog.Logger
	// Transport carries the requests; nil means a pooled transport with
	// compression disabled (a transparently gunzipped body would defeat
	// both the size caps and Range offsets).
	Transport http.RoundTripper
	// Retries is how many times one request is retried after a
	// connection error, a 5xx or a 429.
	Retries int
	// BackoffMin and BackoffMax bound the wait between retries, which
	// doubles from BackoffMin. A Retry-After longer than BackoffMax is
	// ignored: a server must not be able to park the installer for a day.
	BackoffMin, BackoffMax time.Duration
	// AttemptTimeout bounds one request from connecting to the last body
	// byte; a download cut short by it resumes where it stopped.
	AttemptTimeout time.Duration
	// HeaderTimeout bounds one attempt from sending the request
	// (connecting included) to the end of its response headers, so a
	// server that accepts connections and never answers, or trickles its
	// headers, is abandoned in seconds.
	HeaderTimeout time.Duration
	// FirstByteTimeout bounds the wait for the first body byte after the
	// headers.
	FirstByteTimeout time.Duration
	// MinThroughput (bytes per second) is what the body must average
	// over every ThroughputWindow; a slower server is abandoned.
	MinThroughput    int64
	ThroughputWindow time.Duration
	// MaxResumes is how many times one download may be resumed after its
	// body was cut short.
	MaxResumes int
	// ProjectedLimit is how long an attempt of a download with
	// alternatives (Target.Alternatives) may be projected to take, at
	// the speed it has had so far, before it is abandoned for the other
	// URLs; checked every ThroughputWindow.
	ProjectedLimit time.Duration
	// UserAgent is sent with every request.
	UserAgent string
}

// Client fetches over HTTP. It is safe for concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger
	rc   *retryablehttp.Client
}

// New returns a Client.
func New(opts Options) *Client {
	if opts.Retries <= 0 {
		opts.Retries = DefaultRetries
	}
	if opts.BackoffMin <= 0 {
		opts.BackoffMin = DefaultBackoffMin
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = DefaultBackoffMax
	}
	if opts.BackoffMax < opts.BackoffMin {
		opts.BackoffMax = opts.BackoffMin
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = DefaultAttemptTimeout
	}
	if opts.HeaderTimeout <= 0 {
		opts.HeaderTimeout = DefaultHeaderTimeout
	}
	if opts.FirstByteTimeout <= 0 {
		opts.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if opts.MinThroughput <= 0 {
		opts.MinThroughput = DefaultMinThroughput
	}
	if opts.ThroughputWindow <= 0 {
		opts.ThroughputWindow = DefaultThroughputWindow
	}
	if opts.MaxResumes <= 0 {
		opts.MaxResumes = DefaultMaxResumes
	}
	if opts.ProjectedLimit <= 0 {
		opts.ProjectedLimit = DefaultProjectedLimit
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "deskhand-installer"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transport := opts.Transport
	if transport == nil {
		t := cleanhttp.DefaultPooledTransport()
		t.DisableCompression = true
		transport = t
	}
	transport = &deadlineTransport{rt: transport, header: opts.HeaderTimeout, firstByte: opts.FirstByteTimeout}
	c := &Client{opts: opts, log: logger}
	c.rc = &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: transport,
			Timeout:   opts.AttemptTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 {
					return errors.New("stopped after 5 redirects")
				}
				if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
					return fmt.Errorf("refusing a redirect from https to %s", req.URL.Scheme)
				}
				return nil
			},
		},
		Logger:       leveled{logger},
		RetryWaitMin: opts.BackoffMin,
		RetryWaitMax: opts.BackoffMax,
		RetryMax:     opts.Retries,
		CheckRetry:   checkRetry,
		Backoff:      c.backoff,
	}
	return c
}

// checkRetry is retryablehttp's default policy, except that a stalled
// server is not asked again: it already cost a whole deadline, and the
// next mirror is more likely to answer.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if errors.Is(err, ErrStalled) && ctx.Err() == nil {
		return false, nil
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// backoff is the retryablehttp.Backoff: jittered exponential between min
// and max, or the server's Retry-After when it asks for no more than max.
func (c *Client) backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if h := resp.Header.Get("Retry-After"); h != "" {
			d, ok := parseRetryAfter(h, time.Now())
			switch {
			case ok && d <= hi:
				return d
			case ok:
				c.log.Warn("ignoring an absurd Retry-After", "url", resp.Request.URL.Redacted(), "retry_after", h, "waiting", hi)
				return hi
			}
		}
	}
	d := lo
	for range attempt {
		if d >= hi/2 {
			d = hi
			break
		}
		d *= 2
	}
	d = min(d, hi)
	// Full jitter over the upper half keeps many clients from retrying in
	// step without ever waiting less than half the nominal delay.
	return d/2 + rand.N(d/2+1)
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(365*24*time.Hour/time.Second) {
			secs = int64(365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// do sends a GET for url with headers through the retrying client. The
// returned cancel ends the request (and its body); it must be called.
func (c *Client) do(ctx context.Context, url string, header http.Header) (*http.Response, context.CancelCauseFunc, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel(nil)
		return nil, nil, fmt.Errorf("building request for %s: %w", url, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := c.rc.Do(req)
	if err != nil {
		cancel(nil)
		// The stall names the URL and what the server did; the HTTP
		// client's wrapping around it would only repeat the URL.
		var stall *stallError
		if errors.As(err, &stall) {
			return nil, nil, stall
		}
		return nil, nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	return resp, cancel, nil
}

// Get fetches url and returns its body, refusing a body over limit bytes
// (whatever Content-Length claims) and a server slower than the minimum
// throughput.
func (c *Client) Get(ctx context.Context, url string, limit int64) ([]byte, error) {
	resp, cancel, err := c.do(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	defer cancel(nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %w %s", url, ErrStatus, resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("fetching %s: %w: Content-Length %d, cap %d bytes", url, ErrTooLarge, resp.ContentLength, limit)
	}
	body := c.watch(resp.Body, cancel, url, 0, false)
	defer body.stop()
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("reading %s: %w: it sent %d bytes in %v (%s), and the time for it is up", url, ErrTooSlow, len(data), body.elapsed().Round(time.Millisecond), rate(int64(len(data)), body.elapsed()))
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, body.cause(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("reading %s: %w: more than %d bytes", url, ErrTooLarge, limit)
	}
	return data, nil
}

// watchedBody counts what is read through it; a watchdog goroutine
// cancels the request when a whole window passes below the minimum
// throughput, or, in a hurry, when the rest (of total bytes) would take
// too long at the speed so far.
type watchedBody struct {
	r       io.Reader
	start   time.Time
	n       atomic.Int64
	tooSlow atomic.Pointer[error]
	done    chan struct{}
}

func (c *Client) watch(r io.Reader, cancel context.CancelCauseFunc, url string, total int64, hurry bool) *watchedBody {
	w := &watchedBody{r: r, start: time.Now(), done: make(chan struct{})}
	window := c.opts.ThroughputWindow
	need := max(c.opts.MinThroughput*int64(window)/int64(time.Second), 1)
	slow := func(err error) {
		w.tooSlow.Store(&err)
		cancel(err)
	}
	go func() {
		t := time.NewTicker(window)
		defer t.Stop()
		last := int64(0)
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				n := w.n.Load()
				if n-last < need {
					slow(fmt.Errorf("%w: %s sent %d bytes in %v (%s), under the minimum of %d bytes/s; abandoning this server", ErrTooSlow, url, n-last, window, rate(n-last, window), c.opts.MinThroughput))
					return
				}
				last = n
				elapsed := w.elapsed()
				projected := time.Duration(float64(total-n) / float64(n) * float64(elapsed))
				if hurry && elapsed+projected > c.opts.ProjectedLimit {
					slow(fmt.Errorf("%w: %s sends %s: the remaining %d of %d bytes would take about %v more, beyond the %v an attempt may take while other URLs wait; trying them first",
						ErrTooSlow, url, rate(n, elapsed), total-n, total, projected.Round(time.Second), c.opts.ProjectedLimit))
					return
				}
			}
		}
	}()
	return w
}

func (w *watchedBody) elapsed() time.Duration { return time.Since(w.start) }

// rate formats a transfer speed.
func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "? KB/s"
	}
	return fmt.Sprintf("%.1f KB/s", float64(n)/1000/d.Seconds())
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.n.Add(int64(n))
	return n, err
}

func (w *watchedBody) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
}

// cause replaces a read error caused by the watchdog with its ErrTooSlow.
func (w *watchedBody) cause(err error) error {
	if e := w.tooSlow.Load(); e != nil {
		return *e
	}
	return err
}

// leveled passes retryablehttp's messages to slog one level down: a failed
// attempt that will be retried is news, not an error.
type leveled struct{ l *slog.Logger }

func (l leveled) Error(msg string, kv ...any) { l.l.Info(msg, kv...) }
func (l leveled) Warn(msg string, kv ...any)  { l.l.Info(msg, kv...) }
func (l leveled) Info(msg string, kv ...any)  { l.l.Debug(msg, kv...) }
func (l leveled) Debug(msg string, kv ...any) { l.l.Debug(msg, kv...) }
