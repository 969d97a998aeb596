//go:build !unix

package record

// oNoFollow is 0 where open has no such flag (Windows: the record's
// directory belongs to the user, and creating a symbolic link there
// needs a privilege).
const oNoFollow = 0
