package consent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/supervisor/catalog"
)

// File names in the config directory.
const (
	PreapprovalFile = "preapproved.json"
	DenialsFile     = "denied.json"
)

// PolicyEnv names an extra managed policy file, read in addition to the
// system one. A policy can only deny, so an extra file can only take
// permissions away; tests and systems that keep policy elsewhere use it.
const PolicyEnv = "DESKHAND_POLICY_FILE"

// DefaultConfigDir is where the pre-approval file and the remembered
// denials live: $XDG_CONFIG_HOME/deskhand, else ~/.config/deskhand (macOS:
// ~/Library/Application Support/deskhand).
func DefaultConfigDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory: %w; set XDG_CONFIG_HOME or HOME", err)
	}
	return filepath.Join(dir, "deskhand"), nil
}

// PolicyPaths are the managed policy files deskhand reads: the system
// one, and the file $DESKHAND_POLICY_FILE names.
func PolicyPaths() []string {
	paths := []string{SystemPolicyPath}
	if p := os.Getenv(PolicyEnv); p != "" {
		paths = append(paths, p)
	}
	return paths
}

// Preapproval is the pre-approval file: apps (APP or APP=TIER) and grant
// flags that request_access grants without asking, in the same words as
// the --allow and --grant flags.
type Preapproval struct {
	Allow []string `json:"allow"`
	Grant []string `json:"grant"`
}

// LoadPreapproval reads a pre-approval file; a missing file is empty.
func LoadPreapproval(path string) (Preapproval, error) {
	var p Preapproval
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("reading the pre-approval file: %w", err)
	}
	if err := decodeStrict(data, &p); err != nil {
		return p, fmt.Errorf("pre-approval file %s: %w; it should look like {\"allow\": [\"xterm\", \"firefox=read\"], \"grant\": [\"clipboardRead\"]}", path, err)
	}
	for _, a := range p.Allow {
		if _, err := ParseAllow(a); err != nil {
			return p, fmt.Errorf("pre-approval file %s: %w", path, err)
		}
	}
	for _, f := range p.Grant {
		if _, err := ParseFlag(f); err != nil {
			return p, fmt.Errorf("pre-approval file %s: %w", path, err)
		}
	}
	return p, nil
}

// SavePreapproval writes a pre-approval file atomically.
func SavePreapproval(path string, p Preapproval) error {
	if p.Allow == nil {
		p.Allow = []string{}
	}
	if p.Grant == nil {
		p.Grant = []string{}
	}
	return writeJSON(path, p)
}

// Denial is an app the user declined; request_access refuses it without
// asking until the user forgets it (`deskhand grants forget`).
type Denial struct {
	AppRef
	DeniedAt time.Time `json:"denied_at"`
	// Reason is the reason the request gave when the user declined.
	Reason string `json:"reason,omitempty"`
}

type denialsFile struct {
	Denied []Denial `json:"denied"`
}

// Denials is the store of remembered denials, one JSON file shared by
// every deskhand process of the user. Each change re-reads the file under
// a lock, so concurrent servers do not lose each other's entries.
type Denials struct {
	path string
}

// NewDenials returns the store at path.
func NewDenials(path string) *Denials { return &Denials{path: path} }

// Path is the store's file.
func (d *Denials) Path() string { return d.path }

// List returns the remembered denials.
func (d *Denials) List() ([]Denial, error) {
	f, err := d.read()
	return f.Denied, err
}

// Find returns the denial that covers ref, if any.
func (d *Denials) Find(ref AppRef) (Denial, bool, error) {
	list, err := d.List()
	if err != nil {
		return Denial{}, false, err
	}
	for _, den := range list {
		if den.Same(ref) {
			return den, true, nil
		}
	}
	return Denial{}, false, nil
}

// Add remembers refs as denied, once each.
func (d *Denials) Add(refs []AppRef, reason string, now time.Time) error {
	if len(refs) == 0 {
		return nil
	}
	return d.update(func(f *denialsFile) {
		for _, r := range refs {
			if slices.ContainsFunc(f.Denied, func(x Denial) bool { return x.Same(r) }) {
				continue
			}
			f.Denied = append(f.Denied, Denial{AppRef: r, DeniedAt: now.UTC(), Reason: reason})
		}
	})
}

// Forget removes the denials q mentions (see AppRef.Mentions), under
// any of its spellings (a path, a desktop file), or all of them when all
// is set, and returns what it removed.
func (d *Denials) Forget(q string, all bool) ([]Denial, error) {
	var removed []Denial
	names := spellings(strings.TrimSpace(q))
	err := d.update(func(f *denialsFile) {
		kept := f.Denied[:0]
		for _, den := range f.Denied {
			if all || slices.ContainsFunc(names, den.Mentions) {
				removed = append(removed, den)
				continue
			}
			kept = append(kept, den)
		}
		f.Denied = kept
	})
	return removed, err
}

func (d *Denials) read() (denialsFile, error) {
	var f denialsFile
	data, err := os.ReadFile(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("reading the remembered denials: %w", err)
	}
	if err := decodeStrict(data, &f); err != nil {
		return f, fmt.Errorf("remembered denials %s: %w; fix the file, or delete it to forget every denial", d.path, err)
	}
	return f, nil
}

func (d *Denials) update(change func(*denialsFile)) error {
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(d.path), err)
	}
	unlock, err := lockFile(d.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	f, err := d.read()
	if err != nil {
		return err
	}
	change(&f)
	if f.Denied == nil {
		f.Denied = []Denial{}
	}
	return writeJSON(d.path, f)
}

// Policy is the managed policy: apps and grant flags deskhand refuses
// with no user override, checked before any dialog.
type Policy struct {
	// Deny lists apps by name or any identifier (desktop-entry id,
	// WM_CLASS, executable name, bundle id); a name the catalog knows
	// covers every identity of that app.
	Deny []string `json:"deny"`
	// DenyFlags lists grant flags that are never granted.
	DenyFlags []string `json:"deny_flags"`
	// CatalogTiersOnly stops pre-approvals from raising an app above
	// its catalog tier (xterm=full).
	CatalogTiersOnly bool `json:"catalog_tiers_only"`
	// Message is added to every refusal, e.g. whom to ask.
	Message string `json:"message"`

	// Sources are the files this policy came from.
	Sources []string `json:"-"`
}

// LoadPolicy reads and merges the policy files that exist. A file that
// exists but cannot be read or parsed is an error: a managed policy fails
// closed.
func LoadPolicy(paths []string) (Policy, error) {
	var merged Policy
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return merged, fmt.Errorf("reading the managed policy: %w; deskhand will not start until it can read it", err)
		}
		var p Policy
		if err := decodeStrict(data, &p); err != nil {
			return merged, fmt.Errorf("managed policy %s: %w; deskhand will not start with a broken policy (ask whoever manages this machine)", path, err)
		}
		for _, f := range p.DenyFlags {
			if _, err := ParseFlag(f); err != nil {
				return merged, fmt.Errorf("managed policy %s: %w", path, err)
			}
		}
		merged.Deny = append(merged.Deny, p.Deny...)
		for _, f := range p.DenyFlags {
			name, _ := ParseFlag(f)
			merged.DenyFlags = append(merged.DenyFlags, name)
		}
		merged.CatalogTiersOnly = merged.CatalogTiersOnly || p.CatalogTiersOnly
		if p.Message != "" {
			merged.Message = strings.TrimSpace(merged.Message + " " + p.Message)
		}
		merged.Sources = append(merged.Sources, path)
	}
	return merged, nil
}

// Denies returns the policy entry that denies ref, if any.
func (p Policy) Denies(ref AppRef) (string, bool) {
	for _, q := range p.Deny {
		if ref.Mentions(q) {
			return q, true
		}
	}
	return "", false
}

func (p Policy) deniesIdentity(id catalog.Identity) bool {
	_, denied := p.Denies(AppRef{Identity: id})
	return denied
}

// DeniesFlag reports whether the policy denies a grant flag.
func (p Policy) DeniesFlag(name string) bool { return slices.Contains(p.DenyFlags, name) }

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// writeJSON writes v to path atomically: a temporary file in the same
// directory, synced, then renamed over path.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
