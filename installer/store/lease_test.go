package store

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leaseChildEnv makes the test binary hold a lease (see TestMain) on the
// version directory named in its value, print "leased" and wait to be
// killed.
const leaseChildEnv = "DESKHAND_STORE_TEST_LEASE"

func TestMain(m *testing.M) {
	if v := os.Getenv(leaseChildEnv); v != "" {
		dir, name, _ := strings.Cut(v, "|")
		s := New(dir, filepath.Join(dir, "state"))
		if _, err := s.Lease(context.Background(), name); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("leased\n")
		select {}
	}
	os.Exit(m.Run())
}

func commitVersion(t *testing.T, s *Store, version string) {
	t.Helper()
	d, err := s.NewStaging()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d, "f"), []byte(version), 0o644)
	if name, err := s.Commit(d, version); err != nil || name != version {
		t.Fatalf("Commit(%s) = %q, %v", version, name, err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// A leased version survives GC and Commit; once released (or its holder
// dies) the next GC removes it.
func TestLeaseKeepsVersionUntilFree(t *testing.T) {
	s := newStore(t)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		commitVersion(t, s, v)
	}
	l, err := s.Lease(context.Background(), "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	removed, inUse, err := s.GC("1.2.0")
	if err != nil || strings.Join(removed, ",") != "1.1.0" || strings.Join(inUse, ",") != "1.0.0" {
		t.Fatalf("GC with 1.0.0 leased = removed %v, in use %v, %v; want 1.1.0 removed and 1.0.0 kept", removed, inUse, err)
	}
	if !exists(s.Path("1.0.0/f")) {
		t.Fatalf("the leased version's files are gone")
	}
	// Installing 1.0.0 again must not replace the leased directory.
	d, _ := s.NewStaging()
	if name, err := s.Commit(d, "1.0.0"); err != nil || name != "1.0.0~2" {
		t.Fatalf("Commit over a leased directory = %q, %v; want 1.0.0~2", name, err)
	}
	l.Release()
	l.Release()
	if removed, _, err = s.GC("1.2.0"); err != nil || len(removed) != 2 {
		t.Fatalf("GC after the release = %v, %v; want 1.0.0 and 1.0.0~2 removed", removed, err)
	}
	if exists(s.Path("1.0.0")) {
		t.Errorf("1.0.0 survived GC after its lease was released")
	}
	if _, err := s.Lease(context.Background(), "1.0.0"); !errors.Is(err, ErrVersionGone) {
		t.Errorf("Lease of a removed version = %v, want ErrVersionGone", err)
	}
}

// A lease held by a process that was SIGKILLed does not keep the
// version: the kernel drops the flock with the process.
func TestLeaseOfDeadProcessIsIgnored(t *testing.T) {
	s := newStore(t)
	commitVersion(t, s, "1.0.0")
	commitVersion(t, s, "1.1.0")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaseChildEnv+"="+s.Dir+"|1.0.0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "leased\n" {
		cmd.Process.Kill()
		t.Fatalf("lease child said %q, %v", buf, err)
	}
	if _, inUse, _ := s.GC("1.1.0"); len(inUse) != 1 {
		t.Fatalf("GC while another process leases 1.0.0: in use %v, want [1.0.0]", inUse)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if removed, _, err := s.GC("1.1.0"); err != nil || strings.Join(removed, ",") != "1.0.0" {
		t.Fatalf("GC after the leasing process was killed = %v, %v; want 1.0.0 removed", removed, err)
	}
}

// The lock file is never followed through a symbolic link: the link's
// target keeps its content and the error says what to do.
func TestSymlinkedLockRefused(t *testing.T) {
	s := newStore(t)
	os.MkdirAll(s.Dir, 0o700)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	if err := os.Symlink(victim, filepath.Join(s.Dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Lock(ctx, nil)
	if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), "rm ") {
		t.Errorf("Lock through a symlinked lock file = %v, want ErrSymlink saying to remove it", err)
	}
	if _, _, err := s.LockHolder(); !errors.Is(err, ErrSymlink) {
		t.Errorf("LockHolder through a symlinked lock file = %v, want ErrSymlink", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("the symlink's target now holds %q, want it untouched", got)
	}
	// A hard link is refused too.
	os.Remove(filepath.Join(s.Dir, ".lock"))
	if err := os.Link(victim, filepath.Join(s.Dir, ".lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(ctx, nil); err == nil || !strings.Contains(err.Error(), "links") {
		t.Errorf("Lock through a hard-linked lock file = %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("the hard link's target now holds %q, want it untouched", got)
	}
}

func TestCheckPrivate(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data", "helpers")
	os.MkdirAll(filepath.Join(dir, "1.0.0"), 0o700)
	if err := CheckPrivate(dir, filepath.Join(dir, "1.0.0"), filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("CheckPrivate on private directories = %v", err)
	}
	for _, tc := range []struct {
		name  string
		setup func() string // returns the directory made unsafe
		says  string
	}{
		{"world-writable version directory", func() string { p := filepath.Join(dir, "1.0.0"); os.Chmod(p, 0o777); return p }, "writable by group or others"},
		{"group-writable store", func() string { os.Chmod(dir, 0o770); return dir }, "writable by group or others"},
		{"world-writable sticky store", func() string { os.Chmod(dir, 0o777|os.ModeSticky); return dir }, "writable by group or others"},
		{"world-writable parent", func() string { p := filepath.Join(root, "data"); os.Chmod(p, 0o777); return p }, "writable by group or others"},
		{"parent owned by another user", func() string { p := filepath.Join(root, "data"); os.Lchown(p, 4242, 4242); return p }, "owned by uid 4242"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.setup()
			defer func() {
				os.Chmod(bad, 0o700)
				os.Lchown(bad, os.Getuid(), os.Getgid())
			}()
			if tc.says == "owned by uid 4242" && os.Getuid() != 0 {
				t.Skip("needs root to chown")
			}
			err := CheckPrivate(dir, filepath.Join(dir, "1.0.0"))
			var ue *UnsafeDirError
			if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafeDir) || ue.Path != bad || !strings.Contains(ue.Problem, tc.says) || ue.Fix == "" {
				t.Fatalf("CheckPrivate with a %s = %v, want an UnsafeDirError for %s saying %q", tc.name, err, bad, tc.says)
			}
		})
	}
	// A root-owned sticky world-writable directory above (like /tmp) is fine.
	if os.Getuid() == 0 {
		p := filepath.Join(root, "data")
		os.Chmod(p, 0o777|os.ModeSticky)
		if err := CheckPrivate(dir); err != nil {
			t.Errorf("CheckPrivate below a root-owned sticky directory = %v", err)
		}
		os.Chmod(p, 0o700)
	}
	// A symlinked store is judged where it leads too.
	shared := filepath.Join(root, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777)
	link := filepath.Join(root, "link")
	os.Symlink(shared, link)
	if err := CheckPrivate(link); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("CheckPrivate through a link to a world-writable directory = %v, want ErrUnsafeDir", err)
	}
}
