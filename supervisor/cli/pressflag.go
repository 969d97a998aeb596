package cli

import (
	"flag"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/supervisor/input"
)

// inputFlags are serve's flags for the input backend.
type inputFlags struct {
	clickPressMS int
}

func addInputFlags(fs *flag.FlagSet) *inputFlags {
	f := &inputFlags{}
	fs.IntVar(&f.clickPressMS, "click-press-ms", int(input.DefaultClickPress/time.Millisecond),
		fmt.Sprintf("how long each click holds the mouse button, in `milliseconds` (0-%d): under a window manager that focuses windows on click (openbox, xfwm4), GTK 3 apps lose or miscount clicks held much shorter", input.MaxClickPress/time.Millisecond))
	return f
}

// clickPress is the press time the flag asks for, checked.
func (f *inputFlags) clickPress() (time.Duration, error) {
	d := time.Duration(f.clickPressMS) * time.Millisecond
	if f.clickPressMS < 0 || d > input.MaxClickPress {
		return 0, fmt.Errorf("--click-press-ms %d is out of range: use 0 to %d", f.clickPressMS, input.MaxClickPress/time.Millisecond)
	}
	return d, nil
}
