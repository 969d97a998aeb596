package keycodes

import (
	"sync"

	"github.com/deskhand/deskhand/supervisor/input"
)

var fronts sync.Map // *Input → *input.Input

// front drives in as the shared input front does, so that the tests
// speak in tool terms (key names, text, mouse buttons); a setting made on
// it (SetClickPress) holds for the Input's later calls.
func front(in *Input) *input.Input {
	f, _ := fronts.LoadOrStore(in, input.New(in))
	return f.(*input.Input)
}
