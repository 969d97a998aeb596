package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

const (
	// stderrTailLines is how many helper log lines are kept for errors.
	stderrTailLines = 20
	// maxLogLine caps one helper log line; the rest of a longer line is
	// dropped.
	maxLogLine = 4096
	// stderrDrainWait bounds how long an exit waits for the last log
	// lines, in case something outside the process group holds stderr.
	stderrDrainWait = 500 * time.Millisecond
	// eofExitWait is how long a helper that closed stdout gets to exit
	// before it counts as broken.
	eofExitWait = time.Second
	// killWait bounds the wait for a SIGKILLed group to be reaped.
	killWait = 5 * time.Second
)

// restartNote ends the message of a failure after which the next call
// starts a new helper.
const restartNote = "; the next call starts a new helper"

// Shutdown waits of Close; variables so tests can shorten them.
var (
	stdinCloseWait = time.Second
	sigtermWait    = time.Second
)

// process is one running helper and its connection. A new process (and
// connection) is made for every start; a process is never reused after it
// exits.
type process struct {
	pid    int
	cmd    *exec.Cmd
	log    *slog.Logger
	conn   *jsonrpc2.Conn
	stream *frameStream
	stdin  *os.File
	stderr *os.File
	tail   *logTail
	nextID atomic.Uint64

	exited chan struct{} // closed once the process is reaped
	state  *os.ProcessState
	waitEr error

	mu       sync.Mutex
	reaped   bool  // the leader is reaped: its group id may be reused
	killedBy error // why the client killed it, first reason wins

	windows pushedEpoch // the newest windows_changed, see epoch.go
}

// spawn starts the helper and its connection; it does not handshake.
func spawn(opts *Options, logger *slog.Logger) (*process, error) {
	if opts.Path == "" {
		return nil, errors.New("starting helper: no helper path given (Options.Path is empty)")
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting helper %s: %w", opts.Path, err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("starting helper %s: %w", opts.Path, err)
	}
	GrowPipe(stdoutW)
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("starting helper %s: %w", opts.Path, err)
	}
	exe, extra, cleanup, err := execTarget(opts)
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return nil, fmt.Errorf("starting helper %s: %w", opts.Path, err)
	}
	defer cleanup()
	cmd := exec.Command(exe, opts.Args...)
	cmd.Args[0] = opts.Path
	cmd.ExtraFiles = extra
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = sysProcAttr()
	// Start from a fresh goroutine: Pdeathsig fires when the spawning OS
	// thread exits, and a caller locked to its thread (as the input code
	// is) may let that thread go; a fresh goroutine runs on an unlocked
	// thread, which the runtime never exits.
	started := make(chan error, 1)
	go func() { started <- cmd.Start() }()
	err = <-started
	// The child has its own copies; the parent keeps only its ends, so
	// stdout and stderr reach EOF when the helper's group is gone.
	closeAll(stdinR, stdoutW, stderrW)
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR)
		return nil, fmt.Errorf("starting helper %s: %w", opts.Path, err)
	}

	p := &process{
		pid:    cmd.Process.Pid,
		cmd:    cmd,
		log:    logger.With("helper_pid", cmd.Process.Pid),
		stdin:  stdinW,
		stderr: stderrR,
		tail:   &logTail{done: make(chan struct{})},
		exited: make(chan struct{}),
	}
	p.stream = newFrameStream(stdoutR, stdinW, FrameCodec{MaxReadBytes: opts.MaxMessageBytes})
	p.conn = jsonrpc2.NewConn(context.Background(), p.stream, helperMessages{log: p.log, notify: opts.notify, windows: &p.windows},
		jsonrpc2.OnRecv(p.noteUnmatched))
	go p.tail.drain(stderrR, p.log)
	go p.reap()
	p.log.Debug("helper started", "path", opts.Path)
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// reap waits for the helper to exit, kills whatever is left of its process
// group, collects its exit status and closes the connection.
func (p *process) reap() {
	err := waitExit(p.cmd, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		// Leftovers (anything the helper spawned) die with it.
		killGroup(p.pid, syscall.SIGKILL)
		p.reaped = true
	})
	select {
	case <-p.tail.done:
	case <-time.After(stderrDrainWait):
		p.stderr.Close() // something outside the group holds it; stop draining
	}
	p.state, p.waitEr = p.cmd.ProcessState, err
	close(p.exited)
	p.conn.Close()
	p.log.Debug("helper exited", "status", p.status())
}

// hasExited reports whether the helper has exited and been reaped.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitExited waits up to d for the helper to be reaped.
func (p *process) waitExited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// kill SIGKILLs the helper's process group, recording why; the first
// recorded reason is the one calls report.
func (p *process) kill(reason error) {
	p.signal(syscall.SIGKILL, reason)
}

// signal sends sig to the helper's process group unless the leader has
// been reaped (its group id could then belong to someone else).
func (p *process) signal(sig syscall.Signal, reason error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killedBy == nil {
		p.killedBy = reason
	}
	if !p.reaped {
		killGroup(p.pid, sig)
	}
}

func (p *process) killReason() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killedBy
}

// shutdown stops the helper politely, then less so: close stdin (the
// helper exits on end of file), wait, SIGTERM the group, wait, SIGKILL it.
func (p *process) shutdown(reason error) {
	p.mu.Lock()
	if p.killedBy == nil {
		p.killedBy = reason
	}
	p.mu.Unlock()
	p.stdin.Close()
	if p.waitExited(stdinCloseWait) {
		return
	}
	p.log.Warn("helper did not exit after its stdin was closed; sending SIGTERM", "waited", stdinCloseWait)
	p.signal(syscall.SIGTERM, reason)
	if p.waitExited(sigtermWait) {
		return
	}
	p.log.Warn("helper ignored SIGTERM; sending SIGKILL", "waited", sigtermWait)
	p.signal(syscall.SIGKILL, reason)
	if !p.waitExited(killWait) {
		p.log.Error("helper survived SIGKILL; it is stuck in the kernel", "waited", killWait)
	}
}

// failure explains why the connection to the helper ended during method
// ("" when idle), killing the helper first when it is still running, and
// returns the error a call reports. It waits for the helper to be reaped.
func (p *process) failure(method string) error {
	if cause := p.stream.fault(); cause != nil {
		p.kill(fmt.Errorf("%w%s: %v; killed pid %d"+restartNote+"%s",
			ErrProtocol, during(method), cause, p.pid, p.tail.phrase()))
	} else if !p.waitExited(eofExitWait) {
		p.kill(fmt.Errorf("%w: it closed its stdout%s but kept running; killed pid %d"+restartNote+"%s",
			ErrProtocol, during(method), p.pid, p.tail.phrase()))
	}
	if !p.waitExited(killWait) {
		return fmt.Errorf("%w: pid %d did not exit %s after SIGKILL; it is stuck in the kernel", ErrHelperHung, p.pid, killWait)
	}
	if reason := p.killReason(); reason != nil {
		return reason
	}
	return p.exitError(method)
}

// exitError describes an exit the client did not cause.
func (p *process) exitError(method string) error {
	when := during(method)
	if method == "" {
		when = " while idle"
	}
	return fmt.Errorf("%w: pid %d %s%s"+restartNote+"%s",
		ErrHelperExited, p.pid, p.status(), when, p.tail.phrase())
}

// status says how the reaped helper ended.
func (p *process) status() string {
	if p.state == nil {
		if p.waitEr != nil {
			return "ended (" + p.waitEr.Error() + ")"
		}
		return "ended"
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", p.state.ExitCode())
}

func during(method string) string {
	if method == "" {
		return ""
	}
	return " during " + method
}

// noteUnmatched logs responses that match no pending call, such as the
// error a helper sends with id null before it exits on a framing error.
func (p *process) noteUnmatched(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	if req != nil || resp == nil {
		return
	}
	if resp.Error != nil {
		p.log.Warn("helper sent an error for no pending call", "id", resp.ID.String(), "error", helperError(resp.Error).Error())
		return
	}
	p.log.Warn("helper sent a result for no pending call", "id", resp.ID.String())
}

// frameStream is the jsonrpc2.ObjectStream over the helper's stdin and
// stdout. It records why reading stopped, so the client can tell a helper
// that exited from one that wrote garbage.
type frameStream struct {
	codec  FrameCodec
	r      *bufio.Reader
	stdout *os.File
	stdin  *os.File

	wmu sync.Mutex
	w   *bufio.Writer

	mu      sync.Mutex
	readErr error

	blobs *blobStore
}

func newFrameStream(stdout, stdin *os.File, codec FrameCodec) *frameStream {
	return &frameStream{
		codec:  codec,
		r:      bufio.NewReaderSize(stdout, 64<<10),
		stdout: stdout,
		stdin:  stdin,
		w:      bufio.NewWriter(stdin),
		blobs:  newBlobStore(),
	}
}

func (s *frameStream) WriteObject(obj any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.codec.WriteObject(s.w, obj); err != nil {
		s.w.Reset(s.stdin) // drop a partial frame; the write error ends the call
		return err
	}
	return s.w.Flush()
}

// ReadObject reads the next frame. After recording the cause of a failure
// it reports plain io.EOF, because jsonrpc2.Conn would otherwise print the
// cause through the standard log package, bypassing the client's logger;
// the client reports the recorded cause itself.
func (s *frameStream) ReadObject(v any) error {
	err := s.codec.decode(s.r, v, s.blobs.lift)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	if s.readErr == nil {
		s.readErr = err
	}
	s.mu.Unlock()
	return io.EOF
}

// fault returns the read error if reading stopped because of what the
// helper wrote, and nil if it stopped at end of file (the helper exited or
// closed stdout) or because the client closed the stream.
func (s *frameStream) fault() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.readErr
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

func (s *frameStream) Close() error {
	err1 := s.stdin.Close()
	err2 := s.stdout.Close()
	if err1 != nil && !errors.Is(err1, os.ErrClosed) {
		return err1
	}
	if err2 != nil && !errors.Is(err2, os.ErrClosed) {
		return err2
	}
	return nil
}

// logTail drains the helper's stderr into the logger and keeps the last
// lines for error messages.
type logTail struct {
	done chan struct{} // closed when stderr reaches end of file

	mu    sync.Mutex
	lines []string
}

// drain logs each stderr line at the level its first word names.
func (t *logTail) drain(stderr *os.File, logger *slog.Logger) {
	defer close(t.done)
	defer stderr.Close()
	r := bufio.NewReaderSize(stderr, maxLogLine)
	for {
		line, err := readLogLine(r)
		if line != "" {
			level, msg := logLevel(line)
			logger.Log(context.Background(), level, msg, "source", "helper")
			t.add(line)
		}
		if err != nil {
			return
		}
	}
}

// readLogLine reads one line, dropping bytes beyond maxLogLine.
func readLogLine(r *bufio.Reader) (string, error) {
	line, isPrefix, err := r.ReadLine()
	out := strings.TrimRight(string(line), "\r")
	for isPrefix && err == nil {
		_, isPrefix, err = r.ReadLine()
	}
	return out, err
}

// logLevel maps a helper log line's leading level word to a slog level.
// Lines without one (a Rust panic message, say) are logged as warnings,
// whole.
func logLevel(line string) (slog.Level, string) {
	word, rest, _ := strings.Cut(line, " ")
	switch word {
	case "DEBUG":
		return slog.LevelDebug, rest
	case "INFO":
		return slog.LevelInfo, rest
	case "WARN":
		return slog.LevelWarn, rest
	case "ERROR":
		return slog.LevelError, rest
	}
	return slog.LevelWarn, line
}

func (t *logTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == stderrTailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:stderrTailLines-1]
	}
	t.lines = append(t.lines, line)
}

// Lines returns a copy of the kept lines, oldest first.
func (t *logTail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// last picks the line most worth quoting: the latest ERROR or unlabelled
// line (a panic message, say), else the latest line. Rust's "note: run
// with RUST_BACKTRACE" trailer is skipped as it says nothing about the
// cause.
func (t *logTail) last() string {
	lines := t.Lines()
	var fallback string
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if strings.HasPrefix(line, "note: run with `RUST_BACKTRACE") {
			continue
		}
		if fallback == "" {
			fallback = line
		}
		if word, _, _ := strings.Cut(line, " "); word == "ERROR" || !isLevelWord(word) {
			return line
		}
	}
	return fallback
}

func isLevelWord(word string) bool {
	switch word {
	case "DEBUG", "INFO", "WARN", "ERROR":
		return true
	}
	return false
}

// phrase quotes the line from last for an error message, or is empty.
func (t *logTail) phrase() string {
	line := t.last()
	if line == "" {
		return ""
	}
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	return fmt.Sprintf("; its last log line: %q", line)
}
