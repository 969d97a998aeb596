// Deskhand-release builds and signs deskhand helper releases for the
// installer: a reproducible .tar.gz per platform and the signed
// manifest.json that pins them (see manifests/README.md).
//
// Usage:
//
//	deskhand-release keygen [-dir DIR] NAME
//	deskhand-release build -version V -base-url URL [-base-url MIRROR]... -key FILE|env:VAR
//	                       [-helper OS/ARCH=PATH]... [-validity 720h] [-out DIR]
//	deskhand-release verify [-pub FILE]... MANIFEST
//
// keygen writes NAME.key (secret, mode 0600) and NAME.pub into DIR.
// build probes each helper that runs on this machine for its version and
// protocol (others need -helper-version and -protocol), writes the archives
// and manifest.json into DIR, and signs it with the key (repeat -key to
// sign with the current and the next key during a rotation). verify checks
// a manifest against the keys this build trusts, or the given public keys,
// and prints it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/deskhand/deskhand/installer/manifest"
	"github.com/deskhand/deskhand/installer/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "deskhand-release: %v\n", err)
		}
		os.Exit(2)
	}
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("want a command: keygen, build or verify (see the package documentation)")
	}
	switch args[0] {
	case "keygen":
		fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
		dir := fs.String("dir", ".", "directory for NAME.key and NAME.pub")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("keygen: want one NAME")
		}
		pub, secret, err := release.GenerateKey(*dir, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Printf("secret key: %s (keep it offline; never commit it)\npublic key: %s (add its line to installer/manifest/trusted_keys.txt)\n", secret, pub)
		return nil
	case "build":
		return build(ctx, args[1:])
	case "verify":
		return verify(args[1:])
	}
	return fmt.Errorf("unknown command %q: want keygen, build or verify", args[0])
}

func build(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	version := fs.String("version", "", "release version (MAJOR.MINOR.PATCH)")
	var baseURLs, keys, helpers listFlag
	fs.Var(&baseURLs, "base-url", "URL the archives are served under; repeat for mirrors, primary first")
	fs.Var(&keys, "key", "secret key `FILE`, or env:VAR to read it from an environment variable; repeat to sign with several")
	fs.Var(&helpers, "helper", "`OS/ARCH=PATH` of a built helper; default "+runtime.GOOS+"/"+runtime.GOARCH+"=bin/deskhand-helper")
	helperVersion := fs.String("helper-version", "", "helper version for helpers that cannot run here")
	protocol := fs.String("protocol", "", "comma-separated protocol versions for helpers that cannot run here")
	validity := fs.Duration("validity", 30*24*time.Hour, "how long the manifest stays valid")
	out := fs.String("out", "dist", "output `directory`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(helpers) == 0 {
		helpers = listFlag{runtime.GOOS + "/" + runtime.GOARCH + "=bin/deskhand-helper"}
	}
	opts := release.Options{Version: *version, BaseURLs: baseURLs, Validity: *validity}
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", v)
		}
		opts.ModTime = time.Unix(secs, 0)
	}
	for _, k := range keys {
		key, err := release.LoadKey(k)
		if err != nil {
			return fmt.Errorf("loading key %s: %w", k, err)
		}
		opts.Keys = append(opts.Keys, key)
	}
	for _, h := range helpers {
		plat, path, ok := strings.Cut(h, "=")
		goos, goarch, ok2 := strings.Cut(plat, "/")
		if !ok || !ok2 {
			return fmt.Errorf("-helper %q: want OS/ARCH=PATH", h)
		}
		in := release.Input{OS: goos, Arch: goarch, HelperPath: path}
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			v, protos, err := release.Probe(ctx, path)
			if err != nil {
				return err
			}
			in.HelperVersion, in.ProtocolVersions = v, protos
		} else {
			if *helperVersion == "" || *protocol == "" {
				return fmt.Errorf("%s cannot run here to be probed: give -helper-version and -protocol", plat)
			}
			in.HelperVersion = *helperVersion
			for _, p := range strings.Split(*protocol, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(p))
				if err != nil {
					return fmt.Errorf("-protocol %q: %w", *protocol, err)
				}
				in.ProtocolVersions = append(in.ProtocolVersions, n)
			}
		}
		opts.Inputs = append(opts.Inputs, in)
	}
	res, err := release.Build(opts)
	if err != nil {
		return err
	}
	if err := res.Write(*out); err != nil {
		return err
	}
	fmt.Printf("wrote %s/manifest.json (version %s, expires %s)\n", *out, res.Manifest.Version, res.Manifest.Expires.Format(time.RFC3339))
	for _, a := range res.Manifest.Artifacts {
		fmt.Printf("  %s/%s: %s (%d bytes, sha256 %s)\n", a.OS, a.Arch, release.ArchiveName(res.Manifest.Version, a.OS, a.Arch), a.Size, a.SHA256)
	}
	return nil
}

func verify(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	var pubs listFlag
	fs.Var(&pubs, "pub", "public key `FILE` to trust instead of the embedded keys; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("verify: want one MANIFEST file")
	}
	trusted := manifest.TrustedKeys()
	if len(pubs) > 0 {
		trusted = nil
		for _, p := range pubs {
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			k, err := manifest.ParsePublicKey(string(raw))
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			trusted = append(trusted, k)
		}
	}
	doc, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	m, err := manifest.Open(doc, trusted)
	if err != nil {
		return err
	}
	fmt.Printf("ok: version %s, issued %s, expires %s\n", m.Version, m.Issued.Format(time.RFC3339), m.Expires.Format(time.RFC3339))
	for _, a := range m.Artifacts {
		fmt.Printf("  %s/%s helper %s protocols %v, %d bytes, sha256 %s\n", a.OS, a.Arch, a.HelperVersion, a.ProtocolVersions, a.Size, a.SHA256)
		for _, u := range a.URLs {
			fmt.Printf("    %s\n", u)
		}
	}
	return nil
}
