package windows

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/deskhand/deskhand/supervisor/lock"
	"golang.org/x/sys/windows"
)

// Lock returns the computer-use lock of this interactive session, kept in
// the named section LockName (see there).
func Lock(opts lock.Options) *lock.Lock { return lock.OnSeat(&seat{}, opts) }

var (
	kernel32            = windows.NewLazySystemDLL("kernel32.dll")
	procOpenFileMapping = kernel32.NewProc("OpenFileMappingW")
)

// seat holds the section while this process holds the lock. Creating a
// named object is atomic in the object manager: of two deskhands, exactly
// one creates it and the other opens the existing one.
type seat struct {
	mu   sync.Mutex
	h    windows.Handle
	view uintptr
}

func (s *seat) String() string { return "the session object " + LockName }

// section is the mapped view at view. (The double conversion keeps vet's
// unsafeptr check quiet: the address comes from MapViewOfFile, not Go.)
func section(view uintptr) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&view))), lockSize)
}

// write puts rec in the section, the length last, so a reader sees either
// no record or a whole one.
func write(view uintptr, rec []byte) {
	b := section(view)
	copy(b[4:], rec[4:])
	copy(b[:4], rec[:4])
}

// Take creates the section and writes rec into it, unless it exists: then
// it reads the holder's record and closes its handle again.
func (s *seat) Take(rec lock.Owner) (*lock.Owner, error) {
	data, err := encodeRecord(rec)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h != 0 {
		write(s.view, data)
		return nil, nil
	}
	name, _ := windows.UTF16PtrFromString(LockName)
	// The holder writes its record just after it creates the section; a
	// reader in between sees no record yet and looks again.
	for range 100 {
		h, err := windows.CreateFileMapping(windows.InvalidHandle, nil, windows.PAGE_READWRITE, 0, lockSize, name)
		if h == 0 {
			return nil, fmt.Errorf("taking the computer-use lock %s: %w", LockName, err)
		}
		view, verr := windows.MapViewOfFile(h, windows.FILE_MAP_WRITE|windows.FILE_MAP_READ, 0, 0, lockSize)
		if verr != nil {
			windows.CloseHandle(h)
			return nil, fmt.Errorf("taking the computer-use lock %s: %w", LockName, verr)
		}
		if !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
			write(view, data)
			s.h, s.view = h, view
			return nil, nil
		}
		holder, rerr := decodeRecord(section(view))
		windows.UnmapViewOfFile(view)
		windows.CloseHandle(h)
		if !errors.Is(rerr, errNoRecord) {
			return holder, rerr
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &lock.Owner{Client: "a program that made the lock and wrote no record"}, nil
}

func (s *seat) Kept() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h != 0, nil
}

func (s *seat) Give() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return nil
	}
	windows.UnmapViewOfFile(s.view)
	err := windows.CloseHandle(s.h)
	s.h, s.view = 0, 0
	return err
}

func (s *seat) Holder() (*lock.Owner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h != 0 {
		return decodeRecord(section(s.view))
	}
	name, _ := windows.UTF16PtrFromString(LockName)
	r, _, err := procOpenFileMapping.Call(windows.FILE_MAP_READ, 0, uintptr(unsafe.Pointer(name)))
	if r == 0 {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the computer-use lock %s: %w", LockName, err)
	}
	h := windows.Handle(r)
	defer windows.CloseHandle(h)
	view, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, lockSize)
	if err != nil {
		return nil, fmt.Errorf("reading the computer-use lock %s: %w", LockName, err)
	}
	defer windows.UnmapViewOfFile(view)
	o, err := decodeRecord(section(view))
	if errors.Is(err, errNoRecord) {
		return &lock.Owner{Client: "a deskhand taking it now"}, nil
	}
	return o, err
}
