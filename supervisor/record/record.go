// Package record keeps the action record: one JSON line per tool call, in
// the state directory, saying who called what with which arguments, what
// every gate decided, how it ended and how long it took. It is how a user
// audits what an agent did; `deskhand log` reads it.
//
// Typed text and clipboard contents are redacted unless the user opts in:
// the record must not become a second copy of what the agent typed.
package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileName is the record's name in the state directory; the previous file
// after a rotation is FileName with ".1" before the extension.
const FileName = "actions.jsonl"

// DefaultMaxBytes is the size at which the record rotates: the current
// file becomes the previous one (replacing it), so the record keeps at most
// twice this.
const DefaultMaxBytes = 8 << 20

// Entry is one tool call.
type Entry struct {
	Time    time.Time       `json:"time"`
	Session string          `json:"session,omitempty"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args,omitempty"`
	// Gates are the decisions of the safety gates, in the order they ran
	// (a batch has a run per step).
	Gates []Decision `json:"gates,omitempty"`
	// Result is "ok", "error" (the tool refused or failed; Error says why)
	// or "protocol_error".
	Result     string  `json:"result"`
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Call is the entry of a call in progress, which the gates note their
// decisions in (With, Note).
type Call struct {
	mu    sync.Mutex
	entry Entry
}

// NewCall starts the entry of a call.
func NewCall(e Entry) *Call { return &Call{entry: e} }

// Finish takes the call's entry, with every decision noted so far.
func (c *Call) Finish() Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry
	e.Gates = append([]Decision(nil), c.entry.Gates...)
	return e
}

// Decision is one gate's verdict on one action.
type Decision struct {
	Gate   string `json:"gate"`
	Action string `json:"action,omitempty"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

type entryKey struct{}

// With returns ctx carrying c, for Note.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, entryKey{}, c)
}

// Note adds a gate's decision on action to the entry ctx carries, if any:
// err nil is an allow, else a refusal with err as the reason.
func Note(ctx context.Context, gate, action string, err error) {
	c, _ := ctx.Value(entryKey{}).(*Call)
	if c == nil {
		return
	}
	d := Decision{Gate: gate, Action: action, Allow: err == nil}
	if err != nil {
		d.Reason = err.Error()
	}
	c.mu.Lock()
	c.entry.Gates = append(c.entry.Gates, d)
	c.mu.Unlock()
}

// Log appends entries to the record file, rotating it at MaxBytes.
type Log struct {
	path     string
	maxBytes int64
	// Reveal keeps typed text and clipboard contents in the record.
	reveal bool

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (creating) the record in dir. reveal keeps typed text and
// clipboard contents, which are redacted otherwise; maxBytes 0 means
// DefaultMaxBytes.
func Open(dir string, reveal bool, maxBytes int64) (*Log, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the action record's directory: %w", err)
	}
	l := &Log{path: filepath.Join(dir, FileName), maxBytes: maxBytes, reveal: reveal}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("opening the action record: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the action record: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("the action record %s is not a regular file", l.path)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Path is the record file's path.
func (l *Log) Path() string { return l.path }

// PreviousPath is where the record rotates to.
func PreviousPath(path string) string {
	ext := filepath.Ext(path)
	return path[:len(path)-len(ext)] + ".1" + ext
}

// Write redacts e's arguments (unless the log reveals them) and appends it
// as one line.
func (l *Log) Write(e Entry) error {
	if !l.reveal {
		e.Args = Redact(e.Args)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding an action record entry: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("the action record is closed")
	}
	if l.size+int64(len(line)) > l.maxBytes && l.size > 0 {
		l.f.Close()
		l.f = nil
		if err := os.Rename(l.path, PreviousPath(l.path)); err != nil {
			return fmt.Errorf("rotating the action record: %w", err)
		}
		if err := l.open(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("writing the action record: %w", err)
	}
	return nil
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// secretKeys are the argument names whose string values are what the agent
// typed, pasted or set: the text of type, write_clipboard, set_text and
// set_value, at any depth (a batch's steps, the OpenAI computer action).
var secretKeys = map[string]bool{"text": true, "value": true, "content": true, "clipboard": true}

// Redact replaces every string under a secret key of the JSON value raw
// with a note of its length. Arguments that are not JSON are replaced
// whole.
func Redact(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(`"[arguments that are not JSON, redacted]"`)
	}
	out, err := json.Marshal(redact(v, false))
	if err != nil {
		return json.RawMessage(`"[redacted]"`)
	}
	return out
}

func redact(v any, secret bool) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = redact(x, secret || secretKeys[k])
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = redact(x, secret)
		}
		return t
	case string:
		if secret {
			return fmt.Sprintf("[redacted: %d characters]", len([]rune(t)))
		}
	}
	return v
}
