package mcpserver

import "slices"

// launchedA11yNote says, in launch_app's result, that the launcher turned
// a Chromium-based app's page accessibility on (freedesktop's
// withRendererAccessibility), and that the page's tree may come a moment
// after the window.
func launchedA11yNote(data map[string]any) string {
	argv, _ := data["exec"].([]string)
	if !slices.Contains(argv, "--force-renderer-accessibility") {
		return ""
	}
	return " It is Chromium-based, so it was started with --force-renderer-accessibility: its pages' elements are in get_app_state " +
		"(the page's part of the tree may appear a moment after the window; use wait_for rather than sleeping)."
}
