package consent

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDisplayRunes bounds a name in the dialog, so that no name can push
// the rest of the form out of view.
const maxDisplayRunes = 120

// DisplayName makes a name that came from a request, a window or a
// desktop entry safe to show in the approval dialog, a tool result or a
// terminal: it cannot break a line, reorder the text around it or hide
// characters. Control characters, newlines and line separators,
// bidirectional overrides and isolates, zero-width and other format
// characters, private-use and unassigned code points are written as Go
// escapes (\n, \u202e), so the user sees that something odd is there;
// invalid UTF-8 bytes as \xff. Runs of spaces become one space, and the
// name is cut at maxDisplayRunes.
func DisplayName(s string) string {
	var b strings.Builder
	n := 0
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case unicode.Is(unicode.Zs, r):
			space = b.Len() > 0
			i += size
			continue
		case unicode.IsPrint(r):
			piece = string(r)
		default:
			q := fmt.Sprintf("%+q", r) // '\u202e', '\n'
			piece = q[1 : len(q)-1]
		}
		i += size
		if space {
			piece, space = " "+piece, false
		}
		if n += utf8.RuneCountInString(piece); n > maxDisplayRunes {
			b.WriteString("…")
			break
		}
		b.WriteString(piece)
	}
	return b.String()
}
