// Gen writes the Linux system-shortcut blocklist, linux_shortcuts.json,
// from the default key bindings that the desktops' Debian packages ship
// (GNOME's gsettings schemas, Xfce's xfconf defaults, openbox's rc.xml,
// KDE's X-KDE-Shortcuts) merged with the reviewed hand file
// linux_shortcuts_hand.json, so that every binding those files hold is
// blocked unless the hand file allows it by name.
//
// Usage:
//
//	go run ./supervisor/keyblock/gen [-dir supervisor/keyblock] [-check]
//
// A package that is installed is read from /; otherwise `apt-get
// download` fetches it and `dpkg-deb -x` unpacks it into a temporary
// folder. -check writes nothing and exits 1 when the committed file is
// not what the packages and the hand file make.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the keyblock package folder, which holds the hand file and the output")
	check := flag.Bool("check", false, "compare with the committed file instead of writing it")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "keyblock gen:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	roots, cleanup, err := fetchPackages(packageNames())
	defer cleanup()
	if err != nil {
		return err
	}
	hand, err := os.ReadFile(filepath.Join(dir, handFile))
	if err != nil {
		return err
	}
	out, err := generate(roots, hand)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, outFile)
	if check {
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, out) {
			return fmt.Errorf("%s is stale: run go generate ./supervisor/keyblock", path)
		}
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}
