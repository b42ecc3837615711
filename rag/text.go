package rag

// fnv1a64 is FNV-1a over s, starting from seed (pass fnvOffset64 for the
// standard hash); inlined so hashing n-grams allocates nothing.
func fnv1a64(seed uint64, s string) uint64 {
	h := seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

func fnv1a32(s string) uint32 { return fnv1a32More(fnvOffset32, s) }

// fnv1a32More goes on hashing s after h.
func fnv1a32More(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= fnvPrime32
	}
	return h
}

// termID2 is TermID(a + b), without the string.
func termID2(a, b string) uint32 { return fnv1a32More(fnv1a32More(fnvOffset32, a), b) }

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)
