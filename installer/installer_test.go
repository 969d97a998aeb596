//go:build unix

package installer

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer/archive"
	"github.com/deskhand/deskhand/installer/fetch"
	"github.com/deskhand/deskhand/installer/manifest"
	"github.com/deskhand/deskhand/installer/releasetest"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// env is one test's release server and store, with the real helper's
// archive at hand.
type env struct {
	t       *testing.T
	srv     *releasetest.Server
	opts    Options
	archive []byte
	files   []manifest.File
	hv      string
	protos  []int
}

func testOptions(dir string) Options {
	return Options{
		DataDir:     filepath.Join(dir, "data", "deskhand", "helpers"),
		StateDir:    filepath.Join(dir, "state", "deskhand"),
		TrustedKeys: releasetest.Trusted(),
		Now:         func() time.Time { return releasetest.Epoch },
		OS:          "linux",
		Arch:        "amd64",
		Fetch: fetch.Options{
			Retries: 2, BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
			AttemptTimeout: 5 * time.Second, MinThroughput: 4096, ThroughputWindow: 300 * time.Millisecond,
		},
		Limits:          archive.Limits{MaxEntries: 16, MaxBytes: 32 << 20},
		ValidateTimeout: 3 * time.Second,
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	helper := desktoptest.HelperPath(t)
	arch, files, hv, protos := releasetest.RealHelper(t, helper)
	return &env{t: t, srv: releasetest.NewServer(t), opts: testOptions(t.TempDir()), archive: arch, files: files, hv: hv, protos: protos}
}

// spec is a release of the real helper served by e.srv.
func (e *env) spec(version string) releasetest.Spec {
	return releasetest.Spec{
		Version: version, Archive: e.archive, Files: e.files, HelperVersion: e.hv, Protocols: e.protos,
		URLs: []string{e.srv.At("/helper-" + version + ".tar.gz")},
	}
}

// publish signs and serves a release of the real helper and returns its
// manifest URL.
func (e *env) publish(version string, edit func(*releasetest.Spec)) (string, *releasetest.Release) {
	spec := e.spec(version)
	if edit != nil {
		edit(&spec)
	}
	r := releasetest.Sign(e.t, spec)
	return e.srv.Publish("/"+version+"/manifest.json", r), r
}

func (e *env) install(urls ...string) (*Result, error) {
	o := e.opts
	o.ManifestURLs = urls
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return Install(ctx, o)
}

func (e *env) mustInstall(urls ...string) *Result {
	e.t.Helper()
	res, err := e.install(urls...)
	if err != nil {
		e.t.Fatalf("Install(%v) = %v", urls, err)
	}
	return res
}

// checkActive fails unless version is active, verifies, and completes a
// handshake.
func (e *env) checkActive(version string) *Installed {
	e.t.Helper()
	inst, err := Active(e.opts)
	if err != nil {
		e.t.Fatalf("Active() = %v, want version %s", err, version)
	}
	if inst.Version != version {
		e.t.Fatalf("Active().Version = %q, want %q", inst.Version, version)
	}
	c := bridge.New(bridge.Options{Path: inst.Path, MaxRestarts: 1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		e.t.Fatalf("the active helper %s does not start: %v", inst.Path, err)
	}
	if got := c.HandshakeInfo().HelperVersion; got != e.hv {
		e.t.Fatalf("active helper reports version %q, want %q", got, e.hv)
	}
	return inst
}

func (e *env) activeJSON() []byte {
	raw, err := os.ReadFile(filepath.Join(e.opts.DataDir, "active.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.t.Fatal(err)
	}
	return raw
}

func TestInstallActivatesThenNoOpThenRollback(t *testing.T) {
	e := newEnv(t)
	u1, _ := e.publish("1.0.0", nil)
	var steps []Step
	e.opts.Progress = func(ev Event) {
		if len(steps) == 0 || steps[len(steps)-1] != ev.Step {
			steps = append(steps, ev.Step)
		}
	}
	res := e.mustInstall(u1)
	if !res.Changed || res.Version != "1.0.0" || res.Previous != "" {
		t.Fatalf("first Install = %+v, want 1.0.0 changed with no previous", res)
	}
	inst := e.checkActive("1.0.0")
	if want := filepath.Join(e.opts.DataDir, "1.0.0", "deskhand-helper"); inst.Path != want {
		t.Errorf("helper path = %s, want %s", inst.Path, want)
	}
	wantSteps := []Step{StepLock, StepManifest, StepDownload, StepExtract, StepValidate, StepActivate, StepDone}
	if fmt.Sprint(steps) != fmt.Sprint(wantSteps) {
		t.Errorf("progress steps = %v, want %v", steps, wantSteps)
	}

	hits := e.srv.Hits("/helper-1.0.0.tar.gz")
	before := e.activeJSON()
	res = e.mustInstall(u1)
	if res.Changed {
		t.Errorf("second Install of the same version = %+v, want no change", res)
	}
	if got := e.srv.Hits("/helper-1.0.0.tar.gz"); got != hits {
		t.Errorf("second Install downloaded the archive again (%d hits, want %d)", got, hits)
	}
	if !bytes.Equal(before, e.activeJSON()) {
		t.Errorf("second Install rewrote active.json")
	}

	u2, _ := e.publish("1.1.0", nil)
	res = e.mustInstall(u2)
	if !res.Changed || res.Version != "1.1.0" || res.Previous != "1.0.0" {
		t.Fatalf("upgrade = %+v, want 1.1.0 with previous 1.0.0", res)
	}
	e.checkActive("1.1.0")
	u3, _ := e.publish("1.2.0", nil)
	e.mustInstall(u3)
	if _, err := os.Stat(filepath.Join(e.opts.DataDir, "1.0.0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("version 1.0.0 was not garbage-collected after two upgrades: %v", err)
	}

	ctx := context.Background()
	res, err := Rollback(ctx, e.opts)
	if err != nil {
		t.Fatalf("Rollback() = %v", err)
	}
	if res.Version != "1.1.0" || res.Previous != "1.2.0" {
		t.Errorf("Rollback() = %+v, want 1.1.0 with 1.2.0 kept", res)
	}
	e.checkActive("1.1.0")
	// Rolling back again swaps back.
	if res, err = Rollback(ctx, e.opts); err != nil || res.Version != "1.2.0" {
		t.Fatalf("second Rollback() = %+v, %v; want 1.2.0", res, err)
	}
	e.checkActive("1.2.0")
}

func TestRollbackWithoutPrevious(t *testing.T) {
	e := newEnv(t)
	if _, err := Rollback(context.Background(), e.opts); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Rollback() on an empty store = %v, want ErrNotInstalled", err)
	}
	u, _ := e.publish("1.0.0", nil)
	e.mustInstall(u)
	if _, err := Rollback(context.Background(), e.opts); !errors.Is(err, ErrNoPrevious) {
		t.Errorf("Rollback() with one version = %v, want ErrNoPrevious", err)
	}
}

func TestModifiedHelperRefusedAtLaunch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(t *testing.T, path string)
	}{
		{"appended byte", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{0})
			f.Close()
		}},
		{"flipped byte", func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			data[len(data)/2] ^= 0x40
			os.WriteFile(path, data, 0o755)
		}},
		{"replaced by a script", func(t *testing.T, path string) {
			os.Remove(path)
			os.WriteFile(path, []byte("#!/bin/sh\necho pwned\n"), 0o755)
		}},
		{"made world-writable", func(t *testing.T, path string) { os.Chmod(path, 0o777) }},
		{"manifest edited", func(t *testing.T, path string) {
			os.WriteFile(filepath.Join(filepath.Dir(path), ManifestFile), []byte("{}"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			u, _ := e.publish("1.0.0", nil)
			inst := e.mustInstall(u)
			tc.modify(t, inst.Path)
			_, err := Active(e.opts)
			if !errors.Is(err, ErrModified) {
				t.Fatalf("Active() after the helper was %s = %v, want ErrModified", tc.name, err)
			}
			if !strings.Contains(err.Error(), "deskhand install") {
				t.Errorf("error %q does not say how to fix it", err)
			}
			// Installing again repairs it.
			if res := e.mustInstall(u); !res.Changed {
				t.Errorf("Install over a modified helper = %+v, want a reinstall", res)
			}
			e.checkActive("1.0.0")
		})
	}
}

// badCase is one release or server that Install must reject.
type badCase struct {
	name string
	// setup publishes the bad release on e and returns the manifest URLs.
	setup func(e *env) []string
	want  error
}

func flipPayload(t *testing.T, signed []byte, edit func(payload []byte) []byte) []byte {
	var env manifest.Envelope
	if err := json.Unmarshal(signed, &env); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	env.Payload = base64.StdEncoding.EncodeToString(edit(payload))
	out, _ := json.Marshal(env)
	return out
}

// tarGz builds an archive from raw tar headers and contents.
func tarGz(t *testing.T, entries []tarEntry, trailingZeros int) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, en := range entries {
		hdr := en.hdr
		if hdr.Typeflag == tar.TypeReg {
			hdr.Size = int64(len(en.data))
		}
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(en.data)
	}
	tw.Close()
	zeros := make([]byte, 1<<20)
	for left := trailingZeros; left > 0; left -= len(zeros) {
		zw.Write(zeros[:min(left, len(zeros))])
	}
	zw.Close()
	return buf.Bytes()
}

type tarEntry struct {
	hdr  tar.Header
	data []byte
}

func fileEntry(name string, data []byte, mode int64) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode}, data: data}
}

func mfile(path string, data []byte, mode string) manifest.File {
	sum := sha256.Sum256(data)
	return manifest.File{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Mode: mode}
}

var fakeHelper = []byte("#!/bin/sh\nexit 0\n")

// archiveCase publishes a release whose archive holds entries while the
// manifest lists files.
func archiveCase(entries []tarEntry, trailingZeros int, files ...manifest.File) func(e *env) []string {
	return func(e *env) []string {
		if len(files) == 0 {
			files = []manifest.File{mfile("deskhand-helper", fakeHelper, "0755")}
		}
		data := tarGz(e.t, entries, trailingZeros)
		u, _ := e.publish("2.0.0", func(s *releasetest.Spec) { s.Archive, s.Files = data, files })
		return []string{u}
	}
}

// scriptHelper publishes a release whose helper is a shell script.
func scriptHelper(script string) func(e *env) []string {
	return func(e *env) []string {
		body := []byte("#!/bin/sh\n" + script + "\n")
		data := tarGz(e.t, []tarEntry{fileEntry("deskhand-helper", body, 0o755)}, 0)
		u, _ := e.publish("2.0.0", func(s *releasetest.Spec) {
			s.Archive, s.Files = data, []manifest.File{mfile("deskhand-helper", body, "0755")}
		})
		return []string{u}
	}
}

// serveRaw answers with a hand-written HTTP response on a hijacked
// connection, so headers can lie.
func serveRaw(head string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString(head)
		buf.Write(body)
		buf.Flush()
	}
}

func badCases() []badCase {
	return []badCase{
		{"unsigned manifest", func(e *env) []string {
			_, r := e.publish("2.0.0", nil)
			var envl manifest.Envelope
			json.Unmarshal(r.Signed, &envl)
			envl.Signatures = nil
			raw, _ := json.Marshal(envl)
			e.srv.Put("/bad.json", raw)
			return []string{e.srv.At("/bad.json")}
		}, manifest.ErrUnsigned},
		{"truncated manifest", func(e *env) []string {
			_, r := e.publish("2.0.0", nil)
			e.srv.Put("/bad.json", r.Signed[:len(r.Signed)*2/3])
			return []string{e.srv.At("/bad.json")}
		}, manifest.ErrMalformed},
		{"byte-flipped manifest", func(e *env) []string {
			_, r := e.publish("2.0.0", nil)
			e.srv.Put("/bad.json", flipPayload(e.t, r.Signed, func(p []byte) []byte {
				i := bytes.Index(p, []byte(`"size": `)) + len(`"size": `)
				p[i] ^= 0x01 // one digit of the archive size
				return p
			}))
			return []string{e.srv.At("/bad.json")}
		}, manifest.ErrBadSignature},
		{"signed by an unknown key", func(e *env) []string {
			u, _ := e.publish("2.0.0", func(s *releasetest.Spec) { s.Keys = []ed25519.PrivateKey{releasetest.Unknown} })
			return []string{u}
		}, manifest.ErrUnknownKey},
		{"old manifest relabelled with a newer version", func(e *env) []string {
			_, r := e.publish("0.9.0", nil)
			e.srv.Put("/bad.json", flipPayload(e.t, r.Signed, func(p []byte) []byte {
				return bytes.Replace(p, []byte(`"version": "0.9.0"`), []byte(`"version": "9.9.9"`), 1)
			}))
			return []string{e.srv.At("/bad.json")}
		}, manifest.ErrBadSignature},
		{"older than the highest accepted version", func(e *env) []string {
			u, _ := e.publish("0.9.0", nil)
			return []string{u}
		}, ErrRollback},
		{"expired manifest", func(e *env) []string {
			u, _ := e.publish("2.0.0", func(s *releasetest.Spec) {
				s.Issued, s.Expires = releasetest.Epoch.Add(-48*time.Hour), releasetest.Epoch.Add(-time.Minute)
			})
			return []string{u}
		}, manifest.ErrExpired},
		{"manifest for another platform", func(e *env) []string {
			u, _ := e.publish("2.0.0", func(s *releasetest.Spec) { s.OS, s.Arch = "darwin", "arm64" })
			return []string{u}
		}, manifest.ErrNoArtifact},
		{"100 MB manifest body, no Content-Length", func(e *env) []string {
			e.srv.Handle("/huge.json", func(w http.ResponseWriter, r *http.Request) {
				chunk := bytes.Repeat([]byte("x"), 1<<20)
				for range 100 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			})
			return []string{e.srv.At("/huge.json")}
		}, fetch.ErrTooLarge},
		{"100 MB manifest body, honest Content-Length", func(e *env) []string {
			e.srv.Handle("/huge.json", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", fmt.Sprint(100<<20))
				chunk := bytes.Repeat([]byte("x"), 1<<20)
				for range 100 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			})
			return []string{e.srv.At("/huge.json")}
		}, fetch.ErrTooLarge},
		{"flipped byte in the archive", func(e *env) []string {
			u, r := e.publish("2.0.0", nil)
			bad := bytes.Clone(r.Archive)
			bad[len(bad)/2] ^= 0x01
			e.srv.Put("/"+r.Name, bad)
			return []string{u}
		}, fetch.ErrMismatch},
		{"archive larger than declared, no Content-Length", func(e *env) []string {
			u, r := e.publish("2.0.0", nil)
			e.srv.Handle("/"+r.Name, func(w http.ResponseWriter, _ *http.Request) {
				w.Write(r.Archive)
				w.Write(bytes.Repeat([]byte{0}, 1<<20))
			})
			return []string{u}
		}, fetch.ErrTooLarge},
		{"archive larger than declared, honest Content-Length", func(e *env) []string {
			u, r := e.publish("2.0.0", nil)
			e.srv.Handle("/"+r.Name, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", fmt.Sprint(len(r.Archive)+4096))
				w.Write(r.Archive)
				w.Write(make([]byte, 4096))
			})
			return []string{u}
		}, fetch.ErrTooLarge},
		{"archive larger than declared, lying Content-Length", func(e *env) []string {
			// The server claims the declared size and sends a different,
			// longer archive: only the declared bytes are read, and they
			// do not hash right.
			u, r := e.publish("2.0.0", nil)
			other := append(bytes.Repeat([]byte{0x1f}, 4096), r.Archive...)
			e.srv.Handle("/"+r.Name, serveRaw(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(r.Archive)), other))
			return []string{u}
		}, fetch.ErrMismatch},
		{"entry ../x", archiveCase([]tarEntry{fileEntry("../x", fakeHelper, 0o755)}, 0), archive.ErrUnsafe},
		{"entry /etc/x", archiveCase([]tarEntry{fileEntry("/etc/x", fakeHelper, 0o755)}, 0), archive.ErrUnsafe},
		{"entry reached through a symlink", archiveCase([]tarEntry{
			{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "lib", Linkname: "/etc"}},
			fileEntry("lib/x", fakeHelper, 0o644),
			fileEntry("deskhand-helper", fakeHelper, 0o755),
		}, 0, mfile("deskhand-helper", fakeHelper, "0755"), mfile("lib/x", fakeHelper, "0644")), archive.ErrUnsafe},
		{"hard link", archiveCase([]tarEntry{
			fileEntry("deskhand-helper", fakeHelper, 0o755),
			{hdr: tar.Header{Typeflag: tar.TypeLink, Name: "passwd", Linkname: "/etc/passwd"}},
		}, 0), archive.ErrUnsafe},
		{"FIFO entry", archiveCase([]tarEntry{
			{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: "deskhand-helper", Mode: 0o644}},
		}, 0), archive.ErrUnsafe},
		{"device entry", archiveCase([]tarEntry{
			{hdr: tar.Header{Typeflag: tar.TypeChar, Name: "deskhand-helper", Mode: 0o644, Devmajor: 1, Devminor: 3}},
		}, 0), archive.ErrUnsafe},
		{"setuid entry", archiveCase([]tarEntry{fileEntry("deskhand-helper", fakeHelper, 0o4755)}, 0), archive.ErrUnsafe},
		{"extra file", archiveCase([]tarEntry{
			fileEntry("deskhand-helper", fakeHelper, 0o755),
			fileEntry("extra", []byte("surprise"), 0o644),
		}, 0), archive.ErrUnexpected},
		{"missing file", archiveCase([]tarEntry{fileEntry("deskhand-helper", fakeHelper, 0o755)}, 0,
			mfile("deskhand-helper", fakeHelper, "0755"), mfile("lib/libextra.so", []byte("x"), "0644")), archive.ErrUnexpected},
		{"gzip bomb", archiveCase([]tarEntry{fileEntry("deskhand-helper", fakeHelper, 0o755)}, 64<<20), archive.ErrTooLarge},
		{"helper speaks the wrong protocol", scriptHelper(`body='{"jsonrpc":"2.0","id":1,"result":{"protocol_version":99,"helper_version":"0.1.0","platform":"linux-x11","capabilities":[]}}'
printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body"
exec sleep 30`), ErrInvalidHelper},
		{"helper refuses every protocol", scriptHelper(`body='{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"no common protocol version","data":{"code":"incompatible_protocol","hint":"upgrade"}}}'
printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body"
exec sleep 30`), ErrInvalidHelper},
		{"helper prints garbage", scriptHelper(`echo "hello, I am not a protocol frame"; exec sleep 30`), ErrInvalidHelper},
		{"helper never answers", scriptHelper(`exec sleep 30`), ErrInvalidHelper},
		{"helper exits at once", scriptHelper(`echo "ERROR cannot start" >&2; exit 3`), ErrInvalidHelper},
	}
}

func TestInstallRejects(t *testing.T) {
	for _, tc := range badCases() {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.opts.ValidateTimeout = 1500 * time.Millisecond
			u, _ := e.publish("1.0.0", nil)
			e.mustInstall(u)
			before := e.activeJSON()
			urls := tc.setup(e)
			start := time.Now()
			res, err := e.install(urls...)
			if err == nil {
				t.Fatalf("Install(%s) = %+v, want an error matching %v", tc.name, res, tc.want)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Install(%s) = %v, want an error matching %v", tc.name, err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("rejecting took %v", d)
			}
			t.Logf("rejected: %v", err)
			if !bytes.Equal(before, e.activeJSON()) {
				t.Errorf("active.json changed after a rejected install:\n%s", e.activeJSON())
			}
			e.checkActive("1.0.0")
			entries, _ := os.ReadDir(e.opts.DataDir)
			for _, en := range entries {
				if strings.HasPrefix(en.Name(), ".staging-") || en.Name() == "2.0.0" {
					t.Errorf("a rejected install left %s behind", en.Name())
				}
			}
		})
	}
}

func TestMirrors(t *testing.T) {
	t.Run("primary manifest 500, mirror used", func(t *testing.T) {
		e := newEnv(t)
		u, _ := e.publish("1.0.0", nil)
		e.srv.Handle("/primary.json", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
		e.mustInstall(e.srv.At("/primary.json"), u)
		e.checkActive("1.0.0")
		if got := e.srv.Hits("/primary.json"); got != e.opts.Fetch.Retries+1 {
			t.Errorf("primary got %d requests, want %d (first try and retries)", got, e.opts.Fetch.Retries+1)
		}
	})
	t.Run("primary archive 500, mirror used", func(t *testing.T) {
		e := newEnv(t)
		u, r := e.publish("1.0.0", func(s *releasetest.Spec) {
			s.URLs = []string{e.srv.At("/down/helper.tar.gz"), e.srv.At("/helper-1.0.0.tar.gz")}
		})
		e.srv.Handle("/down/helper.tar.gz", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
		e.mustInstall(u)
		e.checkActive("1.0.0")
		if e.srv.Hits("/"+r.Name) == 0 {
			t.Errorf("the mirror was never asked")
		}
	})
	t.Run("mirror stalling at 1 byte/s is abandoned", func(t *testing.T) {
		e := newEnv(t)
		u, r := e.publish("1.0.0", func(s *releasetest.Spec) {
			s.URLs = []string{e.srv.At("/slow/helper.tar.gz"), e.srv.At("/helper-1.0.0.tar.gz")}
		})
		stalls := stallHandler(r.Archive)
		e.srv.Handle("/slow/helper.tar.gz", stalls)
		e.srv.Handle("/slow.json", stallHandler(r.Signed))
		start := time.Now()
		e.mustInstall(e.srv.At("/slow.json"), u)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("install with stalling servers took %v; the watchdog should abandon them within about %v each", d, e.opts.Fetch.ThroughputWindow)
		}
		e.checkActive("1.0.0")
	})
	t.Run("Retry-After 86400 is not obeyed", func(t *testing.T) {
		e := newEnv(t)
		_, r := e.publish("1.0.0", nil)
		n := 0
		e.srv.Handle("/busy.json", func(w http.ResponseWriter, req *http.Request) {
			n++
			if n == 1 {
				w.Header().Set("Retry-After", "86400")
				http.Error(w, "come back tomorrow", http.StatusServiceUnavailable)
				return
			}
			releasetest.ServeBytes(w, req, r.Signed)
		})
		start := time.Now()
		e.mustInstall(e.srv.At("/busy.json"))
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("install after Retry-After: 86400 took %v", d)
		}
		if n != 2 {
			t.Errorf("the busy server got %d requests, want 2 (it was retried, soon)", n)
		}
		e.checkActive("1.0.0")
	})
}

// stallHandler sends one byte per second of data, with an honest
// Content-Length, until the client gives up.
func stallHandler(data []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(http.StatusOK)
		for i := 0; i < len(data) && i < 30; i++ {
			if _, err := w.Write(data[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

func TestInstallResumesInterruptedDownload(t *testing.T) {
	e := newEnv(t)
	u, r := e.publish("1.0.0", nil)
	var ranges []string
	cut := len(r.Archive) / 3
	e.srv.Handle("/"+r.Name, func(w http.ResponseWriter, req *http.Request) {
		ranges = append(ranges, req.Header.Get("Range"))
		if len(ranges) == 1 {
			// Send a third, then drop the connection.
			sum := sha256.Sum256(r.Archive)
			w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
			w.Header().Set("Content-Length", fmt.Sprint(len(r.Archive)))
			w.Write(r.Archive[:cut])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		releasetest.ServeBytes(w, req, r.Archive)
	})
	e.mustInstall(u)
	e.checkActive("1.0.0")
	if len(ranges) != 2 || ranges[0] != "" || ranges[1] != fmt.Sprintf("bytes=%d-", cut) {
		t.Errorf("Range headers = %q, want none and then bytes=%d-", ranges, cut)
	}
}

// TestInstallLeavesNoListener makes sure tests here only talk to
// loopback servers they started.
func TestServerIsLoopback(t *testing.T) {
	srv := releasetest.NewServer(t)
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("test server at %s is not on loopback", srv.URL)
	}
}
