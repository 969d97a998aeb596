package bridge

import (
	"context"
	"encoding/json"
	"fmt"
)

// The macOS helper's extensions of the protocol (helpers/macos/README.md,
// "The macOS extensions of the protocol"), named by the capabilities its
// handshake lists.
const (
	CapabilityIncludeApps = "capture.include_apps"
	CapabilityPermissions = "permissions"
	CapabilityWatchEscape = "watch_escape"
)

// NotificationEscapePressed is the macOS helper's notification for an
// Escape the user pressed (never one deskhand posted), after watch_escape.
const NotificationEscapePressed = "escape_pressed"

// WatchEscape starts the macOS helper's keyboard watch and calls onEscape
// for each Escape the user presses; the helper leaves out deskhand's own
// (PROTOCOL.md, "watch_escape (macOS)"). The watch is started again on
// every restarted helper (Watch). When macOS refuses the keyboard tap the
// error is an *Error with code CodePermissionDenied whose hint names the
// Input Monitoring pane.
func (c *Client) WatchEscape(ctx context.Context, onEscape func()) (stop func(), err error) {
	if info := c.HandshakeInfo(); info.ProtocolVersion != 0 && !info.Has(CapabilityWatchEscape) {
		return nil, fmt.Errorf("helper has no %q capability, so it cannot watch the keyboard for the user's Escape", CapabilityWatchEscape)
	}
	return c.Watch(ctx, "watch_escape", nil, NotificationEscapePressed, func(json.RawMessage) { onEscape() })
}

// MacPermissions is the answer to the macOS helper's permissions method.
// ScreenRecording is true only when the preflight passed and a real
// ScreenCaptureKit call succeeded; none of the checks prompts the user.
type MacPermissions struct {
	ScreenRecording bool `json:"screen_recording"`
	Accessibility   bool `json:"accessibility"`
	// InputMonitoring is the grant the Escape watch's keyboard tap needs
	// (IOHIDCheckAccess). It is nil from a helper too old to report it,
	// which is not the same as "not granted".
	InputMonitoring *bool `json:"input_monitoring,omitempty"`
}

// The permission names Permissions accepts in require.
const (
	PermissionScreenRecording = "screen_recording"
	PermissionAccessibility   = "accessibility"
	PermissionInputMonitoring = "input_monitoring"
)

// Permissions asks the macOS helper which privacy permissions it has. Each
// name in require that is not granted fails the call with an *Error whose
// code is "permission_denied" and whose hint names the System Settings pane.
func (c *Client) Permissions(ctx context.Context, require ...string) (*MacPermissions, error) {
	if info := c.HandshakeInfo(); info.ProtocolVersion != 0 && !info.Has(CapabilityPermissions) {
		return nil, fmt.Errorf("helper has no %q capability; it is not the macOS helper", CapabilityPermissions)
	}
	params := struct {
		Require []string `json:"require,omitempty"`
	}{require}
	var res MacPermissions
	if err := c.Call(ctx, "permissions", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CaptureApps takes a screenshot in which only the windows of the apps
// with the given bundle ids are composited (macOS: an SCContentFilter that
// includes just them), so an unapproved app's window never reaches the
// image, even one opened after the last window list. req.Mask windows are
// left out as well. An empty bundleIDs captures no app windows at all.
func (c *Client) CaptureApps(ctx context.Context, req CaptureRequest, bundleIDs []string) (*Capture, error) {
	if info := c.HandshakeInfo(); info.ProtocolVersion != 0 && !info.Has(CapabilityIncludeApps) {
		return nil, fmt.Errorf("helper has no %q capability, so it cannot leave unapproved apps out of a capture", CapabilityIncludeApps)
	}
	if bundleIDs == nil {
		bundleIDs = []string{}
	}
	params := struct {
		CaptureRequest
		IncludeApps []string `json:"include_apps"`
	}{req, bundleIDs}
	var res liftedResult
	if err := c.Call(ctx, "capture", params, &res); err != nil {
		return nil, err
	}
	return decodeCaptureFrom(res.raw, res.blobs)
}
