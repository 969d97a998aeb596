package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor"
)

const helperUsage = `helper [flags] METHOD [PARAMS_JSON]

Starts the capture helper, completes the handshake, calls one method of the
helper protocol (helpers/PROTOCOL.md) and prints the result as JSON. With -o,
the base64 "data" of a capture result is decoded into that file instead.

Examples:

  deskhand helper displays
  deskhand helper windows '{"include_hidden":true}'
  deskhand helper -o shot.jpg capture '{"width":1456,"height":819}'
  deskhand helper clipboard_write '{"text":"hello"}'

Flags:
`

func runHelperCommand(ctx context.Context, args []string, io Stdio) error {
	fs := newFlagSet("helper", helperUsage, io)
	helperPath := fs.String("helper", "", "path of the capture helper binary (default: $DESKHAND_HELPER, then a helper bundled beside this executable, then the installed version, then a verified download)")
	out := fs.String("o", "", "write a capture's decoded image `file` instead of printing its base64 data")
	timeout := fs.Duration("timeout", 10*time.Second, "deadline for the call")
	logLevel := fs.String("log-level", envOr("DESKHAND_LOG", "warn"), "stderr log level: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(io.Err, "deskhand helper: want METHOD and at most one PARAMS_JSON argument")
		fs.Usage()
		return errUsage
	}
	method := fs.Arg(0)
	params := json.RawMessage(`{}`)
	if fs.NArg() == 2 {
		if !json.Valid([]byte(fs.Arg(1))) {
			return fmt.Errorf("PARAMS_JSON is not valid JSON: %q (quote it for the shell, e.g. '{\"x\":1}')", fs.Arg(1))
		}
		params = json.RawMessage(fs.Arg(1))
	}
	logger, err := newLogger(io.Err, *logLevel)
	if err != nil {
		return err
	}
	loc, err := supervisor.LocateHelper(*helperPath)
	if err != nil {
		return err
	}
	logger.Debug("using helper", "path", loc.Path, "from", string(loc.Source))

	client := bridge.New(bridge.Options{Path: loc.Path, Exe: loc.Exe, Logger: logger, CallTimeout: *timeout})
	defer client.Close()

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var result json.RawMessage
	if method != "handshake" {
		if err := client.Call(ctx, method, params, &result); err != nil {
			return fmt.Errorf("calling %s: %w", method, err)
		}
	} else {
		if err := client.Start(ctx); err != nil {
			return err
		}
		if result, err = json.Marshal(client.HandshakeInfo()); err != nil {
			return err
		}
	}
	if *out != "" {
		if result, err = extractImage(result, *out); err != nil {
			return err
		}
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, result, "", "  "); err != nil {
		return fmt.Errorf("formatting the result: %w", err)
	}
	pretty.WriteByte('\n')
	_, err = io.Out.Write(pretty.Bytes())
	return err
}

// extractImage writes a capture result's base64 "data" to path and returns
// the result with data replaced by a note of where it went.
func extractImage(result json.RawMessage, path string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(result, &fields); err != nil {
		return nil, fmt.Errorf("-o needs a capture result, got %s", truncate(result, 80))
	}
	var data string
	if err := json.Unmarshal(fields["data"], &data); err != nil || data == "" {
		return nil, fmt.Errorf("-o needs a capture result with image data; this result has no \"data\" field")
	}
	img, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("decoding image data: %w", err)
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		return nil, fmt.Errorf("writing image: %w", err)
	}
	note, _ := json.Marshal(fmt.Sprintf("%d bytes written to %s", len(img), path))
	fields["data"] = note
	return json.Marshal(fields)
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
