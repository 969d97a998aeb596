// Gen writes the Linux system-shortcut blocklist, linux_shortcuts.json,
// from the default key bindings that the desktops' Debian packages ship
// (GNOME's gsettings schemas, Xfce's xfconf defaults, openbox's rc.xml,
// KDE's X-KDE-Shortcuts) merged with the reviewed hand file
// linux_shortcuts_hand.json, so that every binding those files hold is
// blocked unless the hand file allows it by name.
//
// Usage:
//
//	go run ./supervisor/keyblock/gen [-dir supervisor/keyblock]
//
// `apt-get download` fetches the packages and `dpkg-deb -x` unpacks them
// into a temporary folder; where the archive cannot be reached, installed
// packages are read from /. TestCommittedListCurrent fails when the
// committed file is not what the packages and the hand file make.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the keyblock package folder, which holds the hand file and the output")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "keyblock gen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
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
	return os.WriteFile(filepath.Join(dir, outFile), out, 0o644)
}
