//go:build linux

package sqlite

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lockFile is handles on Linux: the file <db>-handles, which every Store
// open on <db> keeps open with a shared open-file-description lock on its
// first byte, and whose first 8 bytes, mapped into memory, count the Opens.
// OFD locks belong to one open of the file, not to the process, so a second
// Open in this process counts as another handle too; the kernel drops them
// when a process dies, kill -9 included.
type lockFile struct {
	f   *os.File
	fd  int
	mem []byte
	gen *uint64
}

func openHandles(db string) (handles, error) {
	f, err := os.OpenFile(db+"-handles", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: handles file: %w", err)
	}
	l, err := mapHandles(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: handles file %s: %w", f.Name(), err)
	}
	return l, nil
}

func mapHandles(f *os.File) (*lockFile, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < 8 { // a new file; growing one that another Open grew first changes nothing
		if err := f.Truncate(8); err != nil {
			return nil, err
		}
	}
	fd := int(f.Fd())
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: 0, Len: 1}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLKW, &lk); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	l := &lockFile{f: f, fd: fd, mem: mem, gen: (*uint64)(unsafe.Pointer(&mem[0]))}
	// After the lock: a handle that reads the old generation sees the lock.
	atomic.AddUint64(l.gen, 1)
	return l, nil
}

// state loads the generation first, then asks whether any other open of the
// file holds its lock (F_OFD_GETLK for a write lock: the caller's own shared
// lock never conflicts with it).
func (l *lockFile) state() (uint64, bool) {
	gen := atomic.LoadUint64(l.gen)
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 1}
	if err := unix.FcntlFlock(uintptr(l.fd), unix.F_OFD_GETLK, &lk); err != nil {
		return gen, false
	}
	return gen, lk.Type == unix.F_UNLCK
}

func (l *lockFile) close() error {
	err := unix.Munmap(l.mem)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
