package embedded

import (
	"encoding/binary"
	"slices"
	"testing"
)

// termModel is what a chat's arena should hold, entry by entry.
type termModel struct {
	ids []uint32
	ws  []uint16
}

// checkArena reads r whole, and each range of it, and compares them with m.
func checkArena(t *testing.T, tf *termFile, r region, m termModel) {
	t.Helper()
	if int(r.n) != len(m.ids) || r.n > r.capacity() {
		t.Fatalf("region holds %d of %d entries, want %d", r.n, r.capacity(), len(m.ids))
	}
	b, err := tf.all(r)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.put(b)
	if !slices.Equal(b.ids, m.ids) || !slices.Equal(b.ws, m.ws) {
		t.Fatalf("arena reads back\n%v %v\nwant\n%v %v", b.ids, b.ws, m.ids, m.ws)
	}
	for from := 0; from < len(m.ids); from += 3 {
		n := min(5, len(m.ids)-from)
		got := make([]uint32, n)
		if err := tf.readIDs(r, uint32(from), got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, m.ids[from:from+n]) {
			t.Fatalf("ids [%d, %d) read %v, want %v", from, from+n, got, m.ids[from:from+n])
		}
	}
}

// appendAll appends batches to two arenas in turn (so that their regions
// interleave in the file and freed ones are reused) and checks both after
// each append.
func appendAll(t *testing.T, tf *termFile, batches [][]uint32) {
	var rs [2]region
	var ms [2]termModel
	for i, ids := range batches {
		k := i % 2
		ws := make([]uint16, len(ids))
		for j, id := range ids {
			ws[j] = uint16(id*7 + uint32(i))
		}
		r, err := tf.append(rs[k], ids, ws)
		if err != nil {
			t.Fatal(err)
		}
		rs[k] = r
		ms[k].ids, ms[k].ws = append(ms[k].ids, ids...), append(ms[k].ws, ws...)
		checkArena(t, tf, rs[k], ms[k])
		checkArena(t, tf, rs[1-k], ms[1-k])
	}
}

// Entries appended to an arena read back as written, whole or by range,
// across its moves to larger regions (ids before weights in each, so a
// move must copy both parts to their new places).
func TestTermFileRoundTrip(t *testing.T) {
	tf, err := openTermFile(t.TempDir(), "t.db")
	if err != nil {
		t.Fatal(err)
	}
	defer tf.close()
	var batches [][]uint32
	for i := range 40 {
		ids := make([]uint32, i%9) // empty batches too
		for j := range ids {
			ids[j] = uint32(i*1000+j) | 0xfff00000 // all four bytes used
		}
		batches = append(batches, ids)
	}
	batches = append(batches, make([]uint32, 100)) // one past several capacities at once
	appendAll(t, tf, batches)
}

// FuzzTermFile appends the fuzzer's batches (a length byte, then that many
// 4-byte ids) to two arenas and reads them back.
func FuzzTermFile(f *testing.F) {
	f.Add([]byte{3, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 1, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := openTermFile(t.TempDir(), "t.db")
		if err != nil {
			t.Fatal(err)
		}
		defer tf.close()
		var batches [][]uint32
		for len(data) > 0 {
			n := int(data[0]) % 40
			data = data[1:]
			ids := make([]uint32, 0, n)
			for ; n > 0 && len(data) >= 4; n-- {
				ids = append(ids, binary.LittleEndian.Uint32(data))
				data = data[4:]
			}
			batches = append(batches, ids)
		}
		appendAll(t, tf, batches)
	})
}
