//go:build !unix

package cleanup

import (
	"errors"
	"io/fs"
)

func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

func guardFile(string) (func(), error) {
	return nil, errors.New("repairing a turn journal needs a Unix system")
}
