package fetch

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	sha256 "github.com/minio/sha256-simd"
)

// Target is what a download must turn out to be.
type Target struct {
	Size   int64
	SHA256 string // lower-case hex
	// Alternatives says the caller has other URLs to try first: an
	// attempt projected (from its speed so far) to end later than
	// Options.ProjectedLimit after it began is abandoned with
	// ErrTooSlow, and one cut short is not resumed but reported as
	// ErrTooSlow, so that one slow server cannot hold the download while
	// a faster one waits.
	Alternatives bool
}

// partialMeta is kept beside a partial download so that a later run can
// ask the same server for the rest of the same bytes.
type partialMeta struct {
	URL  string `json:"url"`
	ETag string `json:"etag"`
}

// Download fetches url into the file partial, resuming a partial download
// left there by an earlier attempt or run when the server proves (by a
// strong ETag and an exact Content-Range) that it serves the same bytes.
// A 200 answer to a Range request, a wrong Content-Range or a changed ETag
// truncate the file and start again from zero; bytes are written at their
// offset, never appended. A body that outgrows want.Size is refused at
// once. On success partial holds exactly want.Size bytes whose SHA-256 is
// want.SHA256; on ErrMismatch or ErrTooLarge the partial file is removed.
// progress, when not nil, is called with the bytes held so far.
func (c *Client) Download(ctx context.Context, url, partial string, want Target, progress func(done, total int64)) error {
	metaPath := partial + ".meta"
	resumes := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		offset, etag := c.resumePoint(url, partial, metaPath, want.Size)
		if offset == want.Size {
			// Everything is there already (a run killed after the last
			// byte): only the hash is left to check.
			return c.finish(partial, metaPath, want)
		}
		header := http.Header{}
		if offset > 0 {
			header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
			header.Set("If-Range", etag)
		}
		resp, cancel, err := c.do(ctx, url, header)
		if err != nil {
			return err
		}
		restart, err := c.receive(resp, cancel, url, partial, metaPath, offset, etag, want, progress)
		cancel(nil)
		resp.Body.Close()
		switch {
		case err == nil && !restart:
			return c.finish(partial, metaPath, want)
		case errors.Is(err, ErrTooLarge), errors.Is(err, ErrTooSlow), errors.Is(err, ErrStalled), errors.Is(err, ErrStatus):
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if want.Alternatives {
			if err == nil {
				err = errors.New("its answer to a Range request cannot be resumed")
			}
			return fmt.Errorf("%w: %s was cut short (%v); trying the other URLs before resuming it", ErrTooSlow, url, err)
		}
		resumes++
		if resumes > c.opts.MaxResumes {
			if err == nil {
				err = errors.New("the server keeps answering Range requests with bytes that cannot be resumed")
			}
			return fmt.Errorf("downloading %s: gave up after %d interrupted attempts: %w", url, resumes, err)
		}
		if err != nil {
			c.log.Info("download interrupted; resuming", "url", url, "error", err)
		}
	}
}

// resumePoint returns how many bytes of partial can be kept for url and
// the ETag that must still match, removing a partial that cannot be
// resumed.
func (c *Client) resumePoint(url, partial, metaPath string, size int64) (int64, string) {
	fi, err := os.Stat(partial)
	if err != nil {
		return 0, ""
	}
	var meta partialMeta
	raw, err := os.ReadFile(metaPath)
	if err == nil {
		err = json.Unmarshal(raw, &meta)
	}
	switch {
	case err != nil, meta.URL != url, !strongETag(meta.ETag), fi.Size() > size:
		// Unknown origin, another server, no validator, or too long:
		// nothing proves these bytes continue into the rest.
		if fi.Size() > 0 {
			c.log.Info("discarding a partial download that cannot be resumed", "path", partial, "bytes", fi.Size())
		}
		os.Remove(partial)
		os.Remove(metaPath)
		return 0, ""
	}
	return fi.Size(), meta.ETag
}

// receive writes one response into partial. restart reports that the
// answer could not continue the partial download, which has been
// truncated so the next request starts from zero.
func (c *Client) receive(resp *http.Response, cancel context.CancelCauseFunc, url, partial, metaPath string, offset int64, etag string, want Target, progress func(done, total int64)) (restart bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK:
		if offset > 0 {
			c.log.Info("server sent the whole file in answer to a Range request (it ignores Range, or the file changed); restarting from zero", "url", url)
		}
		offset = 0
	case http.StatusPartialContent:
		if offset == 0 {
			return true, c.truncate(partial, metaPath, "server sent 206 Partial Content to a request without Range")
		}
		if got := resp.Header.Get("ETag"); got != etag {
			return true, c.truncate(partial, metaPath, fmt.Sprintf("ETag changed from %s to %s", etag, got))
		}
		start, end, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset || end != want.Size-1 || total != want.Size {
			return true, c.truncate(partial, metaPath, fmt.Sprintf("Content-Range %q does not continue byte %d of %d", resp.Header.Get("Content-Range"), offset, want.Size))
		}
	case http.StatusRequestedRangeNotSatisfiable:
		return true, c.truncate(partial, metaPath, "server refused the Range request (416)")
	default:
		return false, fmt.Errorf("downloading %s: %w %s", url, ErrStatus, resp.Status)
	}
	remaining := want.Size - offset
	if resp.ContentLength > remaining {
		c.discard(partial, metaPath)
		return false, fmt.Errorf("downloading %s: %w: Content-Length %d, but the manifest declares %d bytes in all (%d still to fetch)",
			url, ErrTooLarge, resp.ContentLength, want.Size, remaining)
	}
	meta := partialMeta{URL: url}
	if e := resp.Header.Get("ETag"); strongETag(e) {
		meta.ETag = e
	}
	raw, _ := json.Marshal(meta)
	if err := os.WriteFile(metaPath, raw, 0o600); err != nil {
		return false, fmt.Errorf("recording download state: %w", err)
	}
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("opening %s: %w", partial, err)
	}
	defer f.Close()
	if err := f.Truncate(offset); err != nil {
		return false, fmt.Errorf("truncating %s: %w", partial, err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false, err
	}
	body := c.watch(resp.Body, cancel, url, remaining, want.Alternatives)
	defer body.stop()
	w := &progressWriter{w: f, done: offset, total: want.Size, progress: progress}
	n, err := io.Copy(w, io.LimitReader(body, remaining+1))
	if err != nil {
		return false, fmt.Errorf("downloading %s: %w", url, body.cause(err))
	}
	if n > remaining {
		f.Close()
		c.discard(partial, metaPath)
		return false, fmt.Errorf("downloading %s: %w: the server sent more than the %d bytes the manifest declares", url, ErrTooLarge, want.Size)
	}
	if n < remaining {
		return false, fmt.Errorf("downloading %s: body ended after %d of %d bytes", url, offset+n, want.Size)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("syncing %s: %w", partial, err)
	}
	return false, nil
}

// finish checks the complete partial file against want.
func (c *Client) finish(partial, metaPath string, want Target) error {
	f, err := os.Open(partial)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("hashing %s: %w", partial, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if n != want.Size || got != want.SHA256 {
		c.discard(partial, metaPath)
		return fmt.Errorf("%w: got %d bytes with SHA-256 %s, want %d bytes with %s; the download was corrupted or tampered with",
			ErrMismatch, n, got, want.Size, want.SHA256)
	}
	os.Remove(metaPath)
	return nil
}

func (c *Client) truncate(partial, metaPath, why string) error {
	c.log.Info("restarting the download from zero", "reason", why)
	c.discard(partial, metaPath)
	return errors.New(why)
}

func (c *Client) discard(partial, metaPath string) {
	os.Remove(partial)
	os.Remove(metaPath)
}

// strongETag reports whether e is a strong entity tag, the only kind
// If-Range may carry.
func strongETag(e string) bool {
	return len(e) >= 2 && e[0] == '"' && e[len(e)-1] == '"'
}

// parseContentRange reads "bytes START-END/TOTAL".
func parseContentRange(h string) (start, end, total int64, ok bool) {
	rest, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	s, e, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	start, err1 = strconv.ParseInt(s, 10, 64)
	end, err2 = strconv.ParseInt(e, 10, 64)
	total, err3 = strconv.ParseInt(tot, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || start < 0 || end < start || total <= end {
		return 0, 0, 0, false
	}
	return start, end, total, true
}

type progressWriter struct {
	w           io.Writer
	done, total int64
	progress    func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.progress != nil {
		p.progress(p.done, p.total)
	}
	return n, err
}
