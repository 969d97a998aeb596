//go:build unix

package lock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a foreign deskhand process: with
// LOCKTEST_CHILD set it takes the lock named by LOCKTEST_PATH for session
// LOCKTEST_SESSION, prints one line saying how that went, and (in hold
// mode) waits to be killed.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LOCKTEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	l := New(os.Getenv("LOCKTEST_PATH"), Options{Display: ":9", Client: "locktest"})
	if mode == "race" {
		// Start together: wait for the go signal on stdin.
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	fresh, err := l.Acquire(os.Getenv("LOCKTEST_SESSION"))
	switch {
	case errors.Is(err, ErrHeld):
		fmt.Println("held")
	case err != nil:
		fmt.Println("error", err)
	default:
		fmt.Println("acquired", fresh)
	}
	if mode == "hold" || mode == "race" {
		time.Sleep(time.Hour)
	}
	return 0
}

type childProc struct {
	cmd *exec.Cmd
	out *bufio.Reader
	in  io.WriteCloser
}

func startChild(t *testing.T, mode, path, session string) *childProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKTEST_CHILD="+mode, "LOCKTEST_PATH="+path, "LOCKTEST_SESSION="+session)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return &childProc{cmd: cmd, out: bufio.NewReader(stdout), in: stdin}
}

func (c *childProc) result(t *testing.T) string {
	t.Helper()
	line, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's answer: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestAcquireReuseRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "computer-use-1.lock")
	l := New(path, Options{Display: ":1", Client: "test-client"})
	fresh, err := l.Acquire("s1")
	if err != nil || !fresh {
		t.Fatalf("Acquire(s1) = %v, %v; want fresh", fresh, err)
	}
	o, err := Read(path)
	if err != nil || o == nil {
		t.Fatalf("Read after Acquire = %v, %v", o, err)
	}
	st, _ := startTime(os.Getpid())
	if o.SessionID != "s1" || o.PID != os.Getpid() || o.StartTime != st || o.Display != ":1" || o.Client != "test-client" || o.Acquired.IsZero() {
		t.Errorf("lock record = %+v", o)
	}
	if st == 0 {
		t.Errorf("startTime(self) = 0; want the real start time on Linux")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("lock file mode = %v, %v; want private", fi.Mode(), err)
	}
	// Same session: reused, not fresh, file unchanged.
	before, _ := os.ReadFile(path)
	fresh, err = l.Acquire("s1")
	if err != nil || fresh {
		t.Fatalf("second Acquire(s1) = %v, %v; want reuse", fresh, err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Errorf("reuse rewrote the lock:\n%s\n%s", before, after)
	}
	// Another session of this process: held.
	_, err = l.Acquire("s2")
	var he *HeldError
	if !errors.As(err, &he) || !errors.Is(err, ErrHeld) || he.Owner.SessionID != "s1" {
		t.Fatalf("Acquire(s2) = %v; want a HeldError naming s1", err)
	}
	if !strings.Contains(err.Error(), "cu_lock_held") || !strings.Contains(err.Error(), "s1") {
		t.Errorf("HeldError text %q lacks the code or the owner", err)
	}
	// Releasing another session does nothing.
	if err := l.Release("s2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Release(s2) removed s1's lock: %v", err)
	}
	if err := l.Release("s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file after Release = %v; want gone", err)
	}
	if l.HeldBy() != "" {
		t.Errorf("HeldBy after Release = %q", l.HeldBy())
	}
	// And s2 can have it now.
	if fresh, err := l.Acquire("s2"); err != nil || !fresh {
		t.Fatalf("Acquire(s2) after release = %v, %v", fresh, err)
	}
	if err := l.ReleaseAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file after ReleaseAll = %v; want gone", err)
	}
}

func writeOwner(t *testing.T, path string, o Owner) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(o)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLiveForeignOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "l.lock")
	owner := liveForeignOwner(t)
	ppid := owner.PID
	writeOwner(t, path, owner)
	l := New(path, Options{})
	_, err := l.Acquire("mine")
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("Acquire over a live owner = %v; want HeldError", err)
	}
	if he.Owner.PID != ppid || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", ppid)) {
		t.Errorf("HeldError = %v; want it to name pid %d", err, ppid)
	}
	// ReleaseAll of a handle that never held it leaves the owner alone.
	if err := l.ReleaseAll(); err != nil {
		t.Fatal(err)
	}
	if o, _ := Read(path); o == nil || o.SessionID != "other" {
		t.Fatalf("foreign lock after ReleaseAll = %+v", o)
	}
}

func TestStaleOwners(t *testing.T) {
	host, _ := os.Hostname()
	ppid := os.Getppid()
	pst, _ := startTime(ppid)
	dead := deadPID(t)
	for _, tc := range []struct {
		name  string
		owner Owner
		raw   string
	}{
		{name: "dead pid", owner: Owner{SessionID: "gone", PID: dead, StartTime: 12345, Host: host}},
		{name: "dead pid without start time", owner: Owner{SessionID: "gone", PID: dead, Host: host}},
		{name: "reused pid", owner: Owner{SessionID: "reused", PID: ppid, StartTime: pst + 1, Host: host}},
		{name: "reused pid 1", owner: Owner{SessionID: "reused", PID: 1, StartTime: 999999999999, Host: host}},
		{name: "garbage", raw: "not json"},
		{name: "empty", raw: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "locks", "l.lock")
			if tc.raw != "" || tc.owner.PID == 0 {
				os.WriteFile(path, []byte(tc.raw), 0o600)
			} else {
				writeOwner(t, path, tc.owner)
			}
			l := New(path, Options{})
			fresh, err := l.Acquire("new")
			if err != nil || !fresh {
				t.Fatalf("Acquire over a stale owner = %v, %v; want a takeover", fresh, err)
			}
			if o, _ := Read(path); o == nil || o.SessionID != "new" || o.PID != os.Getpid() {
				t.Fatalf("owner after takeover = %+v", o)
			}
		})
	}
}

// TestZombieOwner: an owner killed but not yet reaped by its parent is
// stale.
func TestZombieOwner(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	st, err := startTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	path := filepath.Join(t.TempDir(), "locks", "l.lock")
	writeOwner(t, path, Owner{SessionID: "zombie", PID: pid, StartTime: st, Host: host})
	l := New(path, Options{})
	if _, err := l.Acquire("new"); !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire over a live owner = %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	deadline := time.Now().Add(3 * time.Second)
	for {
		if _, err := startTime(pid); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed process never became a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !pidExists(pid) {
		t.Fatal("the zombie's pid is gone already; the test proves nothing")
	}
	if fresh, err := l.Acquire("new"); err != nil || !fresh {
		t.Fatalf("Acquire over a zombie owner = %v, %v; want a takeover", fresh, err)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if pidExists(pid) {
		t.Skipf("pid %d was reused at once", pid)
	}
	return pid
}

// TestOtherProcess: a second process gets cu_lock_held while the first
// lives, and takes over once the first is killed with SIGKILL.
func TestOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "l.lock")
	holder := startChild(t, "hold", path, "first")
	if got := holder.result(t); got != "acquired true" {
		t.Fatalf("holder: %q", got)
	}
	l := New(path, Options{})
	_, err := l.Acquire("second")
	var he *HeldError
	if !errors.As(err, &he) || he.Owner.PID != holder.cmd.Process.Pid || he.Owner.SessionID != "first" || he.Owner.Client != "locktest" {
		t.Fatalf("Acquire while the holder lives = %v; want HeldError naming pid %d", err, holder.cmd.Process.Pid)
	}
	if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	holder.cmd.Wait()
	fresh, err := l.Acquire("second")
	if err != nil || !fresh {
		t.Fatalf("Acquire after SIGKILL = %v, %v; want a takeover", fresh, err)
	}
	// And a third process now sees us.
	third := startChild(t, "once", path, "third")
	if got := third.result(t); got != "held" {
		t.Fatalf("third process: %q; want held", got)
	}
	l.ReleaseAll()
}

// TestTakeoverRace: processes that all find the same stale owner at once
// end with exactly one of them holding the lock.
func TestTakeoverRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "l.lock")
	host, _ := os.Hostname()
	writeOwner(t, path, Owner{SessionID: "gone", PID: deadPID(t), Host: host})
	const n = 6
	var kids []*childProc
	for i := range n {
		kids = append(kids, startChild(t, "race", path, fmt.Sprintf("racer%d", i)))
	}
	for _, k := range kids {
		k.in.Write([]byte("go\n"))
	}
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for _, k := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line, _ := k.out.ReadString('\n')
			mu.Lock()
			counts[strings.TrimSpace(line)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts["acquired true"] != 1 || counts["held"] != n-1 {
		t.Fatalf("race outcomes = %v; want one acquired and %d held", counts, n-1)
	}
}

func TestDisplayKey(t *testing.T) {
	for _, tc := range []struct{ display, want string }{
		// One local server, however it is spelled.
		{":1", "1"}, {":1.0", "1"}, {":1.2", "1"}, {" :1 ", "1"}, {":01", "1"},
		{"unix:1", "1"}, {"unix:1.0", "1"}, {"unix/:1", "1"}, {"unix/anything:1", "1"},
		{"localhost:1", "1"}, {"LocalHost:1.0", "1"}, {"tcp/localhost:1", "1"},
		{"127.0.0.1:1", "1"}, {"127.0.1.1:1", "1"}, {"[::1]:1", "1"}, {"::1:1", "1"},
		{"myhost:1", "1"}, {"MyHost.:1", "myhost._1"},
		// Other servers.
		{":0", "0"}, {":10.0", "10"}, {"other:1", "other_1"}, {"other:1.0", "other_1"},
		{"10.0.0.5:2", "10.0.0.5_2"}, {"tcp/other:3", "other_3"},
		// Not HOST:N: kept, file-safe.
		{"", "default"}, {":0/../x", "_0_.._x"}, {"host/../..:3", ".._.._3"}, {"../../etc", ".._.._etc"}, {":x", "_x"},
	} {
		if got := displayKey(tc.display, "myhost"); got != tc.want {
			t.Errorf("displayKey(%q) = %q, want %q", tc.display, got, tc.want)
		}
	}
	if a, b := filepath.Base(Path("/r", ":3")), filepath.Base(Path("/r", "localhost:3.0")); a != b || a != "computer-use-3.lock" {
		t.Errorf("Path(:3) = %q, Path(localhost:3.0) = %q; want both computer-use-3.lock", a, b)
	}
}

func TestDir(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	if got := Dir(); got != filepath.Join(rt, "deskhand") {
		t.Errorf("Dir() with XDG_RUNTIME_DIR = %q", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	uid := strconv.Itoa(os.Getuid())
	if got := Dir(); got != filepath.Join("/run/user", uid, "deskhand") && got != filepath.Join("/tmp", "deskhand-"+uid) {
		t.Errorf("Dir() without XDG_RUNTIME_DIR = %q", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "relative/dir")
	if got := Dir(); strings.HasPrefix(got, "relative") {
		t.Errorf("Dir() took a relative XDG_RUNTIME_DIR: %q", got)
	}
}

// TestLockDirChecked: the lock is made in a fresh private directory, and
// refused in one that others may write to or that is a symbolic link.
func TestLockDirChecked(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "a", "deskhand")
	l := New(Path(fresh, ":1"), Options{})
	if _, err := l.Acquire("s"); err != nil {
		t.Fatalf("Acquire in a fresh directory: %v", err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("lock directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	l.ReleaseAll()

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	if _, err := New(Path(open, ":1"), Options{}).Acquire("s"); err == nil || !strings.Contains(err.Error(), "mode 0777") {
		t.Errorf("Acquire in a 0777 directory: %v", err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(fresh, link); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Path(link, ":1"), Options{}).Acquire("s"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Acquire through a symbolic link: %v", err)
	}
	if err := private(base, os.Getuid()+1); err == nil || !strings.Contains(err.Error(), "belongs to uid") {
		t.Errorf("private() of another user's directory: %v", err)
	}
}

// TestHeldLockReadAgainWhenReplaced: a session that holds the lock finds
// it taken the moment the file is no longer the one it wrote, even
// between two of its own actions: a live owner's record put in its place,
// in place or by a new file, and the file removed.
func TestHeldLockReadAgainWhenReplaced(t *testing.T) {
	other := liveForeignOwner(t)
	replace := map[string]func(t *testing.T, path string){
		"new file": func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeOwner(t, path, other)
		},
		"in place": func(t *testing.T, path string) { writeOwner(t, path, other) },
	}
	for name, put := range replace {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "locks", "l.lock")
			l := New(path, Options{})
			for range 2 { // taken, then found ours
				if _, err := l.Acquire("mine"); err != nil {
					t.Fatalf("Acquire(mine) = %v", err)
				}
			}
			put(t, path)
			var he *HeldError
			if _, err := l.Acquire("mine"); !errors.As(err, &he) || he.Owner.SessionID != "other" {
				t.Fatalf("Acquire(mine) after the file became another live session's = %v; want a HeldError naming it", err)
			}
		})
	}
	t.Run("removed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "locks", "l.lock")
		l := New(path, Options{})
		if _, err := l.Acquire("mine"); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if fresh, err := l.Acquire("mine"); err != nil || !fresh {
			t.Fatalf("Acquire(mine) after the file was removed = %v, %v; want it taken afresh", fresh, err)
		}
		if o, err := Read(path); err != nil || o == nil || o.SessionID != "mine" {
			t.Fatalf("lock after taking it afresh = %+v, %v", o, err)
		}
	})
}

// liveForeignOwner is a record of session "other" held by a live process
// that is not this one: the test's parent stands in for a foreign
// deskhand.
func liveForeignOwner(t *testing.T) Owner {
	t.Helper()
	ppid := os.Getppid()
	st, err := startTime(ppid)
	if err != nil {
		t.Skipf("cannot read the parent's start time: %v", err)
	}
	host, _ := os.Hostname()
	return Owner{SessionID: "other", PID: ppid, StartTime: st, Host: host, Command: "deskhand", Acquired: time.Now()}
}
