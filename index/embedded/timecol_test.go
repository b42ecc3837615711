package embedded

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// applyTimeOps runs ops read from data on a timeColumn and on a plain
// []int64, and fails at the first slot where they differ. Each op is a
// byte (which op, and where) and, for insert and set, a time: one of a few
// hard cases (noTime, the ends of int64, the edges of the narrow range
// around the first time) or 4 bytes of seconds around 2023.
func applyTimeOps(t *testing.T, data []byte) {
	var tc timeColumn
	var model []int64
	next := func() int64 {
		if len(data) < 5 {
			return noTime
		}
		k, v := data[0], int64(int32(binary.LittleEndian.Uint32(data[1:5])))
		data = data[5:]
		switch k % 8 {
		case 0:
			return noTime
		case 1:
			return math.MaxInt64
		case 2:
			return math.MinInt64 + 1
		case 3:
			if tc.hasBase {
				return tc.base + math.MaxInt32 + v%2
			}
		case 4:
			if tc.hasBase {
				return tc.base + math.MinInt32 + v%2
			}
		}
		return 1_700_000_000 + v
	}
	for len(data) > 0 {
		op := data[0]
		data = data[1:]
		at := int(op>>2) % (len(model) + 1)
		switch op % 4 {
		case 0, 1:
			v := next()
			tc.insert(at, v)
			model = slices.Insert(model, at, v)
		case 2:
			if at < len(model) {
				v := next()
				tc.set(at, v)
				model[at] = v
			}
		case 3: // keep every other slot, as keep does
			w := 0
			for r := range model {
				if r%2 == 0 {
					tc.move(w, r)
					model[w] = model[r]
					w++
				}
			}
			tc.truncate(w)
			model = model[:w]
			tc.clone()
		}
		if tc.len() != len(model) {
			t.Fatalf("%d times, want %d", tc.len(), len(model))
		}
		for i, want := range model {
			if got := tc.at(i); got != want {
				t.Fatalf("slot %d: %d, want %d (base %d, wide %v)", i, got, want, tc.base, tc.wide != nil)
			}
		}
	}
}

// Times read back as put, through inserts, sets and compactions, in the
// narrow form and across the switch to the wide one; noTime stays noTime.
func TestTimeColumnRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"narrow", []byte{0, 5, 1, 0, 0, 0, 4, 5, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 8, 5, 9, 0, 0, 0}},
		{"noTime first", []byte{0, 0, 0, 0, 0, 0, 0, 5, 7, 0, 0, 0, 0, 5, 250, 255, 255, 255}},
		{"edges of narrow", []byte{0, 5, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 3, 1, 0, 0, 0}},
		{"narrowNone is not an offset", []byte{0, 5, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0}},
		{"extreme base", []byte{0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0}},
		{"wide", []byte{0, 5, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 5, 3, 0, 0, 0}},
		{"set widens", []byte{0, 5, 0, 0, 0, 0, 0, 5, 1, 0, 0, 0, 2, 1, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) { applyTimeOps(t, tc.data) })
	}
}

func FuzzTimeColumn(f *testing.F) {
	f.Add([]byte{0, 5, 1, 0, 0, 0, 4, 5, 2, 0, 0, 0, 3, 0, 1, 0, 0, 0, 0})
	f.Fuzz(applyTimeOps)
}

// The narrow form is 4 bytes a time.
func TestTimeColumnNarrow(t *testing.T) {
	var tc timeColumn
	for i := range 1000 {
		tc.insert(i, 1_700_000_000+int64(i)*86400)
	}
	if tc.wide != nil || len(tc.narrow) != 1000 {
		t.Fatalf("a thousand days of times: wide %v, %d narrow", tc.wide != nil, len(tc.narrow))
	}
}
