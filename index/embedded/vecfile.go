package embedded

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"unsafe"
)

// vecFile keeps the int8 vectors of the in-memory index in a scratch file
// beside the index file instead of Go's heap. They were two thirds of the
// index's memory (93 of 145 MB at 1,000 chats × 200 turns, 384 dims), and a
// query reads one chat's vectors, a few hundred at most: one pread of a
// chat's contiguous region (77 KB for 200 turns, ~10 µs from the page
// cache). The kernel's page cache holds the hot regions; it is not the
// process's resident memory, and under memory pressure the kernel writes
// pages out and reads them back instead of the process running out of
// memory.
//
// The file is a cache of the index file's vectors: it is created empty,
// filled while the index loads, and unlinked as soon as it is open (where
// the OS allows; else removed on Close), so a crash leaves nothing behind
// and nothing in it is ever trusted across a restart.
//
// Each chat owns one region of capacity 2^k vectors; a full region moves
// to one twice its size, and freed regions are reused by size. Caller
// holds the index's write lock for alloc, release and write; read may run
// under the read lock.
type vecFile struct {
	f      *os.File
	remove string // the path to remove on close ("" once unlinked)
	stride int64  // bytes per vector
	end    int64  // the file's size: where a new region starts
	free   map[uint8][]int64
	bufs   sync.Pool // *[]byte for reads
}

// region is a chat's run of vectors in the file: n used of 1<<logCap.
type region struct {
	off    int64
	n      uint32
	logCap uint8
	ok     bool // allocated
}

func (r region) capacity() uint32 { return 1 << r.logCap }

// minLogCap: a region holds at least 16 vectors (6 KB at 384 dims).
const minLogCap = 4

// openVecFile creates the scratch file in dir ("": the OS's temporary
// directory), named after the index file.
func openVecFile(dir, name string, dim int) (*vecFile, error) {
	return openScratch(dir, name+".vectors", dim)
}

// openScratch creates a scratch file of regions of stride bytes an entry
// (vecFile's, or termFile's) in dir, named name-*.
func openScratch(dir, name string, stride int) (*vecFile, error) {
	f, err := os.CreateTemp(dir, name+"-*")
	if err != nil {
		return nil, fmt.Errorf("embedded index: scratch file: %w", err)
	}
	vf := &vecFile{f: f, stride: int64(stride), free: map[uint8][]int64{}}
	if err := os.Remove(f.Name()); err != nil {
		vf.remove = f.Name() // Windows: not while it is open
	}
	return vf, nil
}

func (vf *vecFile) close() error {
	err := vf.f.Close()
	if vf.remove != "" {
		err = errors.Join(err, os.Remove(vf.remove))
	}
	return err
}

// alloc returns a free region for at least n vectors.
func (vf *vecFile) alloc(n uint32) region {
	k := uint8(max(minLogCap, bits.Len32(max(n, 1)-1)))
	if l := vf.free[k]; len(l) > 0 {
		vf.free[k] = l[:len(l)-1]
		return region{off: l[len(l)-1], logCap: k, ok: true}
	}
	r := region{off: vf.end, logCap: k, ok: true}
	vf.end += int64(r.capacity()) * vf.stride
	return r
}

func (vf *vecFile) release(r region) {
	if r.ok {
		vf.free[r.logCap] = append(vf.free[r.logCap], r.off)
	}
}

// write puts v at position pos of r.
func (vf *vecFile) write(r region, pos uint32, v []int8) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)) // int8 and byte share a representation
	if _, err := vf.f.WriteAt(b, r.off+int64(pos)*vf.stride); err != nil {
		return fmt.Errorf("embedded index: write scratch vector file: %w", err)
	}
	return nil
}

// read returns r's first n vectors, in a buffer to hand back with put.
func (vf *vecFile) read(r region) (*[]byte, error) {
	size := int(int64(r.n) * vf.stride)
	bp, _ := vf.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	if cap(*bp) < size {
		*bp = make([]byte, size)
	}
	*bp = (*bp)[:size]
	if size == 0 {
		return bp, nil
	}
	if _, err := vf.f.ReadAt(*bp, r.off); err != nil {
		vf.bufs.Put(bp)
		return nil, fmt.Errorf("embedded index: read scratch vector file: %w", err)
	}
	return bp, nil
}

func (vf *vecFile) put(bp *[]byte) { vf.bufs.Put(bp) }

// grow moves r to a region with room for one more vector, copying its
// vectors, and frees the old one. r itself is unchanged when it fails.
func (vf *vecFile) grow(r region) (region, error) {
	nr := vf.alloc(r.capacity() + 1)
	nr.n = r.n
	if r.n > 0 {
		bp, err := vf.read(r)
		if err != nil {
			vf.release(nr)
			return r, err
		}
		_, err = vf.f.WriteAt(*bp, nr.off)
		vf.put(bp)
		if err != nil {
			vf.release(nr)
			return r, fmt.Errorf("embedded index: write scratch vector file: %w", err)
		}
	}
	vf.release(r)
	return nr, nil
}

// asInt8 views b as int8s (they share a representation).
func asInt8(b []byte) []int8 {
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}
