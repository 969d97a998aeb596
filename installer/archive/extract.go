// Package archive extracts a helper release archive (.tar.gz) into a
// staging directory, admitting exactly the files the signed manifest lists
// and nothing that could reach outside the directory: no absolute or ".."
// paths, no symbolic or hard links, no devices, FIFOs or setuid bits, and
// caps on the entry count and on the bytes gunzip may produce, so a gzip
// bomb stops at the cap instead of filling the disk.
package archive

import (
	"archive/tar"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	sha256 "github.com/minio/sha256-simd"
)

// Errors, wrapped with the entry and the detail; test with errors.Is.
var (
	// ErrUnsafe means an entry could write outside the directory or
	// create something other than a plain file or directory.
	ErrUnsafe = errors.New("unsafe archive entry")
	// ErrUnexpected means the archive does not hold exactly the listed
	// files with their listed sizes and hashes.
	ErrUnexpected = errors.New("archive does not match the manifest")
	// ErrTooLarge means the archive is over an entry-count or size cap.
	ErrTooLarge = errors.New("archive over its size caps")
	// ErrCorrupt means the archive is not a readable gzip-compressed tar.
	ErrCorrupt = errors.New("archive is corrupt")
	// ErrNoSpace means the device holding the directory filled up while
	// the files were written: the archive may be fine.
	ErrNoSpace = errors.New("no space left on the device")
)

// File is one file the archive must contain.
type File struct {
	Path   string      // slash-separated, relative
	Size   int64       // exact size
	SHA256 string      // lower-case hex
	Mode   fs.FileMode // permission bits to give it (0755 or 0644)
}

// Limits cap what extraction will do.
type Limits struct {
	// MaxEntries is the most tar entries (files and directories) read.
	MaxEntries int
	// MaxBytes is the most bytes gunzip may produce, headers included.
	MaxBytes int64
}

// DefaultLimits suit helper archives, which hold a handful of files.
var DefaultLimits = Limits{MaxEntries: 256, MaxBytes: 1 << 30}

// Extract reads the gzip-compressed tar r into dir, which must exist and
// be empty. Every file in want must be present exactly once with its size
// and SHA-256; directory entries are allowed only for the parents of listed
// files; anything else fails. Files are created with O_EXCL and O_NOFOLLOW
// and synced. On error, dir may hold part of the archive: the caller
// removes it.
func Extract(r io.Reader, dir string, want []File, lim Limits) error {
	err := extract(r, dir, want, lim)
	if errors.Is(err, syscall.ENOSPC) {
		var total int64
		for _, f := range want {
			total += f.Size
		}
		return fmt.Errorf("%w holding %s: the helper's files need %d bytes (%.1f MB) there: %v; free some space and try again",
			ErrNoSpace, dir, total, float64(total)/1e6, err)
	}
	return err
}

func extract(r io.Reader, dir string, want []File, lim Limits) error {
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = DefaultLimits.MaxEntries
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultLimits.MaxBytes
	}
	files := make(map[string]File, len(want))
	parents := map[string]bool{}
	var total int64
	for _, f := range want {
		files[f.Path] = f
		total += f.Size
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			parents[d] = true
		}
	}
	if total > lim.MaxBytes {
		return fmt.Errorf("%w: the listed files hold %d bytes, over the %d-byte cap", ErrTooLarge, total, lim.MaxBytes)
	}

	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer zr.Close()
	capped := &capReader{r: zr, left: lim.MaxBytes}
	tr := tar.NewReader(capped)
	seen := map[string]bool{}
	entries := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return capped.explain(fmt.Errorf("%w: reading tar header: %v", ErrCorrupt, err))
		}
		entries++
		if entries > lim.MaxEntries {
			return fmt.Errorf("%w: more than %d entries", ErrTooLarge, lim.MaxEntries)
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return err
		}
		if hdr.Mode&0o7000 != 0 {
			return fmt.Errorf("%w: %q has setuid, setgid or sticky bits (mode %o)", ErrUnsafe, name, hdr.Mode)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if !parents[name] {
				return fmt.Errorf("%w: directory %q is not a parent of any listed file", ErrUnexpected, name)
			}
			if seen[name] {
				return fmt.Errorf("%w: directory %q appears twice", ErrUnexpected, name)
			}
			seen[name] = true
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(name)), 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", name, err)
			}
		case tar.TypeReg, tar.TypeRegA:
			f, ok := files[name]
			if !ok {
				return fmt.Errorf("%w: %q is not listed in the manifest", ErrUnexpected, name)
			}
			if seen[name] {
				return fmt.Errorf("%w: %q appears twice", ErrUnexpected, name)
			}
			seen[name] = true
			if hdr.Size != f.Size {
				return fmt.Errorf("%w: %q is %d bytes, the manifest says %d", ErrUnexpected, name, hdr.Size, f.Size)
			}
			if err := writeFile(dir, tr, f); err != nil {
				return capped.explain(err)
			}
		case tar.TypeSymlink, tar.TypeLink:
			return fmt.Errorf("%w: %q is a link (to %q); release archives hold only regular files and directories", ErrUnsafe, name, hdr.Linkname)
		case tar.TypeChar, tar.TypeBlock:
			return fmt.Errorf("%w: %q is a device node", ErrUnsafe, name)
		case tar.TypeFifo:
			return fmt.Errorf("%w: %q is a FIFO", ErrUnsafe, name)
		default:
			return fmt.Errorf("%w: %q has unsupported tar type %q", ErrUnsafe, name, hdr.Typeflag)
		}
	}
	for p := range files {
		if !seen[p] {
			return fmt.Errorf("%w: %q is missing", ErrUnexpected, p)
		}
	}
	// After the end-of-archive marker only zero padding may follow; read
	// it (within the cap) so trailing junk or a bomb behind the marker is
	// noticed instead of ignored.
	if err := drainZeros(capped); err != nil {
		return capped.explain(err)
	}
	return nil
}

// entryName checks a tar entry name and returns it without a leading "./"
// or a trailing "/".
func entryName(raw string) (string, error) {
	name := strings.TrimPrefix(raw, "./")
	name = strings.TrimSuffix(name, "/")
	if name == "" || strings.HasPrefix(name, "/") || len(name) > 255 || strings.ContainsAny(name, "\\\x00") {
		return "", fmt.Errorf("%w: entry name %q is empty, absolute, too long or has a backslash or NUL", ErrUnsafe, raw)
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return "", fmt.Errorf("%w: entry name %q has an empty, \".\" or \"..\" element", ErrUnsafe, raw)
		}
	}
	return name, nil
}

func writeFile(dir string, r io.Reader, f File) error {
	target := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("creating the directory of %s: %w", f.Path, err)
	}
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("creating %s: %w", f.Path, err)
	}
	if err != nil {
		return fmt.Errorf("%w: creating %s: %v", ErrUnsafe, f.Path, err)
	}
	defer out.Close()
	h := sha256.New()
	w := &writeErr{w: out}
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(r, f.Size))
	if w.err != nil {
		// The disk, not the archive: a full device must not be reported
		// as a corrupt download.
		return fmt.Errorf("writing %s: %w", f.Path, w.err)
	}
	if err != nil {
		return fmt.Errorf("%w: reading %s: %v", ErrCorrupt, f.Path, err)
	}
	if n != f.Size {
		return fmt.Errorf("%w: %s ended after %d of %d bytes", ErrCorrupt, f.Path, n, f.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("%w: %s has SHA-256 %s, the manifest says %s", ErrUnexpected, f.Path, got, f.SHA256)
	}
	if err := out.Chmod(f.Mode.Perm() &^ 0o022); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", f.Path, err)
	}
	return out.Close()
}

// writeErr keeps the error of the writer it wraps, to tell a failed
// write from a failed read.
type writeErr struct {
	w   io.Writer
	err error
}

func (w *writeErr) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

func drainZeros(r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b != 0 {
				return fmt.Errorf("%w: data after the end of the tar archive", ErrUnexpected)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
}

// capReader stops with errCapped once left bytes have been read.
type capReader struct {
	r      io.Reader
	left   int64
	capped bool
}

var errCapped = errors.New("decompressed size cap reached")

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.capped = true
		return 0, errCapped
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// explain turns any error met after the cap was hit into ErrTooLarge.
func (c *capReader) explain(err error) error {
	if c.capped {
		return fmt.Errorf("%w: gunzip produced more bytes than the cap (a gzip bomb, or an archive far larger than listed)", ErrTooLarge)
	}
	return err
}
