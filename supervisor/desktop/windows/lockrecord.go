package windows

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/deskhand/deskhand/supervisor/lock"
)

// LockName is the kernel object that is the computer-use lock of an
// interactive session: "Local\" puts it in the session's own namespace,
// so each logged-in user's desktop has its own, and every deskhand in the
// session meets there whatever its environment. The holder keeps a
// handle open; Windows destroys the object when the last handle closes,
// so a holder that dies frees the lock at once.
const LockName = `Local\deskhand-lock`

// lockSize is the size of the section that carries the holder's record:
// a 4-byte little-endian length, then the lock.Owner as JSON.
const lockSize = 4096

var errNoRecord = errors.New("the holder has not written its record yet")

func encodeRecord(o lock.Owner) ([]byte, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	if len(data) > lockSize-4 {
		return nil, fmt.Errorf("the lock record is %d bytes, over %d", len(data), lockSize-4)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(data))), data...), nil
}

// decodeRecord reads a record from the section's bytes; errNoRecord while
// the length is still 0 (the section was made and not yet written).
func decodeRecord(b []byte) (*lock.Owner, error) {
	if len(b) < 4 {
		return nil, errNoRecord
	}
	n := binary.LittleEndian.Uint32(b)
	if n == 0 {
		return nil, errNoRecord
	}
	if int(n) > len(b)-4 {
		return nil, fmt.Errorf("the lock record claims %d bytes", n)
	}
	var o lock.Owner
	if err := json.Unmarshal(b[4:4+n], &o); err != nil || o.PID <= 0 || o.SessionID == "" {
		// Not a deskhand's record: the lock is held all the same.
		return &lock.Owner{Client: "an unknown program"}, nil
	}
	return &o, nil
}
