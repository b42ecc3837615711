package embedded

import (
	"fmt"
	"sync"
	"unsafe"
)

// termFile keeps the chats' sparse arenas (each point's term ids and
// bfloat16 weights) in a scratch file beside the vectors', for the same
// reason: at a million points of short turns they were ~150 of the ~205 MB
// of the index's own columns in Go's heap (docs/performance.md, twenty-first
// pass), and a query reads one chat's arena, a few thousand terms at most:
// two preads from the kernel's page cache. What stays in the heap per point
// is its entries' offset and count (spOff, spLen).
//
// It uses vecFile's regions with a stride of 6 bytes: a region of capacity
// c holds c term ids (4 bytes each) and then c weights (2 bytes each), so
// a chat's ids and weights are each one contiguous read, straight into
// []uint32 and []uint16 (the file is this process's cache, never read by
// another, so the host's byte order is the file's). Caller holds the
// index's write lock for append and release, a read lock for reads.
type termFile struct {
	vf      *vecFile
	bufs    sync.Pool // *termBuf
	loading *termLoad // while Open loads the index file
}

// termEntry is the bytes of one arena entry: an id and a weight.
const termEntry = 6

// termBuf holds entries read from a chat's arena.
type termBuf struct {
	ids []uint32
	ws  []uint16 // bfloat16
}

func openTermFile(dir, name string) (*termFile, error) {
	vf, err := openScratch(dir, name+".terms", termEntry)
	if err != nil {
		return nil, err
	}
	return &termFile{vf: vf}, nil
}

func (tf *termFile) close() error { return tf.vf.close() }

func (tf *termFile) release(r region) { tf.vf.release(r) }

func (tf *termFile) get(n int) *termBuf {
	b, _ := tf.bufs.Get().(*termBuf)
	if b == nil {
		b = &termBuf{}
	}
	if cap(b.ids) < n {
		b.ids, b.ws = make([]uint32, n), make([]uint16, n)
	}
	b.ids, b.ws = b.ids[:n], b.ws[:n]
	return b
}

// put hands b back for reuse; nil is fine.
func (tf *termFile) put(b *termBuf) {
	if b != nil {
		tf.bufs.Put(b)
	}
}

// idsAt and wsAt are where entry i of r's ids and weights are in the file.
func (tf *termFile) idsAt(r region, i uint32) int64 { return r.off + 4*int64(i) }
func (tf *termFile) wsAt(r region, i uint32) int64 {
	return r.off + 4*int64(r.capacity()) + 2*int64(i)
}

func u32Bytes(s []uint32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

func u16Bytes(s []uint16) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 2*len(s))
}

// readIDs reads the ids of entries [from, from+len(dst)) of r into dst.
func (tf *termFile) readIDs(r region, from uint32, dst []uint32) error {
	if len(dst) == 0 {
		return nil
	}
	if _, err := tf.vf.f.ReadAt(u32Bytes(dst), tf.idsAt(r, from)); err != nil {
		return fmt.Errorf("embedded index: read scratch term file: %w", err)
	}
	return nil
}

// read returns entries [from, from+n) of r, in a buffer to hand back with
// put.
func (tf *termFile) read(r region, from, n uint32) (*termBuf, error) {
	b := tf.get(int(n))
	if n == 0 {
		return b, nil
	}
	err := tf.readIDs(r, from, b.ids)
	if err == nil {
		_, err = tf.vf.f.ReadAt(u16Bytes(b.ws), tf.wsAt(r, from))
	}
	if err != nil {
		tf.put(b)
		return nil, fmt.Errorf("embedded index: read scratch term file: %w", err)
	}
	return b, nil
}

// all returns every entry of r (garbage included: offsets index it).
func (tf *termFile) all(r region) (*termBuf, error) { return tf.read(r, 0, r.n) }

// write puts ids and ws at entry at of r (within its capacity).
func (tf *termFile) write(r region, at uint32, ids []uint32, ws []uint16) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := tf.vf.f.WriteAt(u32Bytes(ids), tf.idsAt(r, at))
	if err == nil {
		_, err = tf.vf.f.WriteAt(u16Bytes(ws[:len(ids)]), tf.wsAt(r, at))
	}
	if err != nil {
		return fmt.Errorf("embedded index: write scratch term file: %w", err)
	}
	return nil
}

// append writes ids and ws after r's entries and returns the region that
// now holds them (r itself, or a larger one r's entries moved to, r then
// freed) with n counting them. On failure r is as it was and still r's.
func (tf *termFile) append(r region, ids []uint32, ws []uint16) (region, error) {
	need := r.n + uint32(len(ids))
	nr := r
	if !r.ok || need > r.capacity() {
		nr = tf.vf.alloc(need)
		nr.n = r.n
		if err := tf.move(r, nr); err != nil {
			tf.vf.release(nr)
			return r, err
		}
	}
	if err := tf.write(nr, nr.n, ids, ws); err != nil {
		if nr != r {
			tf.vf.release(nr)
		}
		return r, err
	}
	if nr != r {
		tf.vf.release(r)
	}
	nr.n = need
	return nr, nil
}

// move copies r's entries to the start of nr.
func (tf *termFile) move(r, nr region) error {
	if !r.ok || r.n == 0 {
		return nil
	}
	b, err := tf.all(r)
	if err != nil {
		return err
	}
	defer tf.put(b)
	return tf.write(nr, 0, b.ids, b.ws)
}

// maybeCompact rewrites c's arena in slot order once half of it is
// garbage. When that fails the garbage stays: space, not wrong answers.
// Caller holds mu.
func (ix *Index) maybeCompact(c *chat) {
	if c.garbage == 0 || 2*c.garbage < int(c.sp.n) {
		return
	}
	_ = ix.compactTerms(c)
}

// compactTerms rewrites c's arena in slot order into a region just large
// enough. c is unchanged when it fails. Caller holds mu.
func (ix *Index) compactTerms(c *chat) error {
	b, err := ix.tf.all(c.sp)
	if err != nil {
		return err
	}
	defer ix.tf.put(b)
	total := int(c.sp.n) - c.garbage
	out := ix.tf.get(total)
	defer ix.tf.put(out)
	offs := make([]uint32, c.len())
	w := 0
	for s := range c.seqs {
		idx, ws := c.terms(b, s)
		offs[s] = uint32(w)
		copy(out.ids[w:], idx)
		copy(out.ws[w:], ws)
		w += len(idx)
	}
	r := ix.tf.vf.alloc(uint32(total))
	if err := ix.tf.write(r, 0, out.ids, out.ws); err != nil {
		ix.tf.release(r)
		return err
	}
	ix.tf.release(c.sp)
	r.n = uint32(total)
	c.sp, c.garbage = r, 0
	copy(c.spOff, offs)
	return nil
}

// termsOf returns slot's terms, read from c's arena, in a buffer to hand
// back with put. Caller holds mu (a read lock will do).
func (ix *Index) termsOf(c *chat, slot int) (*termBuf, error) {
	return ix.tf.read(c.sp, c.spOff[slot], c.spLen[slot])
}

// termLoad gathers the terms of the points Open loads, per chat, and
// writes each chat's in one append when loadBatch entries are waiting in
// all (and at the end): two writes per chat and batch instead of two per
// point, which took Open from 1.0 to 1.8 s at 200,000 points
// (BenchmarkMemoryPerTurn). A chat's arena in the file then lacks the
// entries waiting here; nothing reads it before Open returns.
type termLoad struct {
	wait map[*chat]*termBuf
	n    int
}

// loadBatch: entries waiting at most (6 bytes each).
const loadBatch = 1 << 20

// add queues the terms of a point of c and returns their offset in c's
// arena once written.
func (tl *termLoad) add(ix *Index, c *chat, idx []uint32, ws []uint16) (uint32, error) {
	b := tl.wait[c]
	if b == nil {
		b = &termBuf{}
		tl.wait[c] = b
	}
	off := c.sp.n + uint32(len(b.ids))
	b.ids, b.ws = append(b.ids, idx...), append(b.ws, ws...)
	if tl.n += len(idx); tl.n >= loadBatch {
		return off, tl.flush(ix)
	}
	return off, nil
}

// flush writes every chat's waiting terms.
func (tl *termLoad) flush(ix *Index) error {
	for c, b := range tl.wait {
		r, err := ix.tf.append(c.sp, b.ids, b.ws)
		if err != nil {
			return err
		}
		c.sp = r
	}
	clear(tl.wait)
	tl.n = 0
	return nil
}
