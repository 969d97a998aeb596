package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the fuzz seed corpus under testdata/fuzz")

type entry struct {
	hdr  tar.Header
	data []byte
}

func reg(name string, data []byte, mode int64) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data}
}

func build(t testing.TB, entries []entry, trailing []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.data)
	}
	tw.Close()
	zw.Write(trailing)
	zw.Close()
	return buf.Bytes()
}

func want(path string, data []byte, mode fs.FileMode) File {
	sum := sha256.Sum256(data)
	return File{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Mode: mode}
}

var (
	helper = []byte("\x7fELF pretend helper")
	lib    = []byte("library bytes")
	wanted = []File{want("deskhand-helper", helper, 0o755), want("lib/libx.so", lib, 0o644)}
	good   = []entry{
		reg("./deskhand-helper", helper, 0o755),
		{tar.Header{Typeflag: tar.TypeDir, Name: "lib/", Mode: 0o755}, nil},
		reg("lib/libx.so", lib, 0o644),
	}
	small = Limits{MaxEntries: 8, MaxBytes: 1 << 20}
)

func TestExtractGood(t *testing.T) {
	dir := t.TempDir()
	if err := Extract(bytes.NewReader(build(t, good, make([]byte, 10240))), dir, wanted, small); err != nil {
		t.Fatalf("Extract(good) = %v", err)
	}
	for _, w := range wanted {
		p := filepath.Join(dir, w.Path)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != w.Mode {
			t.Errorf("%s mode = %v, want %v", w.Path, fi.Mode().Perm(), w.Mode)
		}
		if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != w.SHA256 {
			t.Errorf("%s content differs", w.Path)
		}
	}
}

func badCases() []struct {
	name     string
	entries  []entry
	trailing []byte
	want     error
} {
	link := func(typ byte, name, target string) entry {
		return entry{tar.Header{Typeflag: typ, Name: name, Linkname: target}, nil}
	}
	return []struct {
		name     string
		entries  []entry
		trailing []byte
		want     error
	}{
		{"dotdot", append([]entry{reg("../x", helper, 0o644)}, good...), nil, ErrUnsafe},
		{"nested dotdot", append([]entry{reg("lib/../../x", helper, 0o644)}, good...), nil, ErrUnsafe},
		{"absolute", append([]entry{reg("/etc/x", helper, 0o644)}, good...), nil, ErrUnsafe},
		{"symlink out", []entry{link(tar.TypeSymlink, "lib", "/etc"), reg("lib/libx.so", lib, 0o644), reg("deskhand-helper", helper, 0o755)}, nil, ErrUnsafe},
		{"symlink in", append([]entry{link(tar.TypeSymlink, "alias", "deskhand-helper")}, good...), nil, ErrUnsafe},
		{"hard link", append(good, link(tar.TypeLink, "h", "/etc/shadow")), nil, ErrUnsafe},
		{"fifo", append(good, entry{tar.Header{Typeflag: tar.TypeFifo, Name: "pipe"}, nil}), nil, ErrUnsafe},
		{"char device", append(good, entry{tar.Header{Typeflag: tar.TypeChar, Name: "null", Devmajor: 1, Devminor: 3}, nil}), nil, ErrUnsafe},
		{"block device", append(good, entry{tar.Header{Typeflag: tar.TypeBlock, Name: "sda", Devmajor: 8}, nil}), nil, ErrUnsafe},
		{"setuid", []entry{reg("deskhand-helper", helper, 0o4755), reg("lib/libx.so", lib, 0o644)}, nil, ErrUnsafe},
		{"setgid dir", []entry{{tar.Header{Typeflag: tar.TypeDir, Name: "lib/", Mode: 0o2755}, nil}, reg("deskhand-helper", helper, 0o755), reg("lib/libx.so", lib, 0o644)}, nil, ErrUnsafe},
		{"extra file", append(good, reg("extra", lib, 0o644)), nil, ErrUnexpected},
		{"extra dir", append(good, entry{tar.Header{Typeflag: tar.TypeDir, Name: "other/", Mode: 0o755}, nil}), nil, ErrUnexpected},
		{"missing file", good[:1], nil, ErrUnexpected},
		{"duplicate file", append(good, reg("deskhand-helper", helper, 0o755)), nil, ErrUnexpected},
		{"wrong content", []entry{reg("deskhand-helper", bytes.ToUpper(helper), 0o755), reg("lib/libx.so", lib, 0o644)}, nil, ErrUnexpected},
		{"wrong size", []entry{reg("deskhand-helper", append(helper, 'x'), 0o755), reg("lib/libx.so", lib, 0o644)}, nil, ErrUnexpected},
		{"junk after the end", good, []byte("hello"), ErrUnexpected},
		{"gzip bomb after the end", good, make([]byte, 4<<20), ErrTooLarge},
	}
}

func TestExtractRejects(t *testing.T) {
	for _, tc := range badCases() {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "stage")
			os.Mkdir(dir, 0o755)
			err := Extract(bytes.NewReader(build(t, tc.entries, tc.trailing)), dir, wanted, small)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Extract(%s) = %v, want %v", tc.name, err, tc.want)
			}
			checkContained(t, root)
		})
	}
	t.Run("not gzip", func(t *testing.T) {
		if err := Extract(bytes.NewReader([]byte("plain")), t.TempDir(), wanted, small); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Extract(not gzip) = %v, want ErrCorrupt", err)
		}
	})
	t.Run("entry cap", func(t *testing.T) {
		lim := Limits{MaxEntries: 2, MaxBytes: 1 << 20}
		if err := Extract(bytes.NewReader(build(t, good, nil)), t.TempDir(), wanted, lim); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Extract(3 entries, cap 2) = %v, want ErrTooLarge", err)
		}
	})
	t.Run("listed files over the cap", func(t *testing.T) {
		lim := Limits{MaxEntries: 8, MaxBytes: 10}
		if err := Extract(bytes.NewReader(build(t, good, nil)), t.TempDir(), wanted, lim); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Extract(cap 10 bytes) = %v, want ErrTooLarge", err)
		}
	})
}

// checkContained fails if anything was written to root outside stage.
func checkContained(t testing.TB, root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.Name() != "stage" {
			t.Fatalf("extraction wrote %s outside the staging directory", e.Name())
		}
	}
	filepath.WalkDir(filepath.Join(root, "stage"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type()&(fs.ModeSymlink|fs.ModeNamedPipe|fs.ModeDevice|fs.ModeSetuid|fs.ModeSetgid) != 0 {
			t.Fatalf("extraction created %s with mode %v", p, d.Type())
		}
		return nil
	})
}

func TestWriteCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata/fuzz/FuzzExtract")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzExtract")
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	seeds := [][]byte{build(t, good, nil), build(t, good[:1], nil)}
	for _, tc := range badCases() {
		if tc.name != "gzip bomb after the end" {
			seeds = append(seeds, build(t, tc.entries, tc.trailing))
		}
	}
	for i, s := range seeds {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)), 0o644)
	}
}

// FuzzExtract: no input panics, writes outside the staging directory,
// creates a link, device, FIFO or setuid file, or is accepted without
// yielding exactly the wanted files.
func FuzzExtract(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "stage")
		os.Mkdir(dir, 0o755)
		err := Extract(bytes.NewReader(data), dir, wanted, Limits{MaxEntries: 8, MaxBytes: 1 << 20})
		checkContained(t, root)
		if err != nil {
			return
		}
		for _, w := range wanted {
			got, rerr := os.ReadFile(filepath.Join(dir, w.Path))
			sum := sha256.Sum256(got)
			if rerr != nil || hex.EncodeToString(sum[:]) != w.SHA256 {
				t.Fatalf("accepted an archive without the right %s", w.Path)
			}
		}
	})
}
