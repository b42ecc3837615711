package embedded

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// A point's key is its identity within its chat: the file's seq column and
// the order of the chat's in-memory columns. The kinds live in disjoint
// ranges, so a key alone tells the kind:
//
//	turn seq s, passage p   s + p<<passageShift   (> 0; passage 0 is s, as in files written before passages)
//	episode from seq s      -s                    (-2^40 < key < 0, as before facts)
//	fact with id f          factKeyTop - h(f)     (<= -2^62; h: 62 bits of FNV-1a of f)
//
// Two fact ids of one chat hashing alike (about 1 in 10^11 for a chat with
// ten thousand facts) would share a point: the later upsert replaces the
// earlier, whose fact then goes unretrieved; nothing else is affected.
const (
	passageShift = 40
	maxSeq       = 1<<passageShift - 1
	maxPassage   = 1<<(63-passageShift) - 1
	factKeyTop   = -(1 << 62)
)

type pointKind uint8

const (
	kindTurn pointKind = iota
	kindEpisode
	kindFact
)

func keyKind(key int64) pointKind {
	switch {
	case key > 0:
		return kindTurn
	case key > factKeyTop:
		return kindEpisode
	}
	return kindFact
}

func turnKey(seq int64, passage int) int64 { return seq + int64(passage)<<passageShift }

// turnOf splits a turn's key into its seq and passage.
func turnOf(key int64) (int64, int) { return key & maxSeq, int(key >> passageShift) }

func factKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return factKeyTop - int64(h.Sum64()&(1<<62-1))
}

// pointKey is a point's key.
func pointKey(p rag.Point) int64 {
	switch p.Kind {
	case memory.KindEpisode:
		return -p.Seq
	case memory.KindFact:
		return factKey(p.FactID)
	}
	return turnKey(p.Seq, p.Passage)
}

// item is what filters need in RAM of an episode or a fact (turns, the
// bulk, have none): its id, an episode's end, a fact's source seqs.
type item struct {
	id         string
	end        int64   // episodes: unix seconds (noTime: none)
	seqs       []int64 // facts: ascending, non-empty
	superseded bool
}

// firstSeq is the seq filters see: an episode's from seq (from its key), a
// fact's first source seq.
func (it *item) firstSeq(key int64) int64 {
	if keyKind(key) == kindEpisode {
		return -key
	}
	return it.seqs[0]
}

func encodeSeqs(seqs []int64) string {
	if len(seqs) == 0 {
		return ""
	}
	b, _ := json.Marshal(seqs) // cannot fail on []int64
	return string(b)
}

func decodeSeqs(s []byte) ([]int64, error) {
	if len(s) == 0 {
		return nil, nil
	}
	var out []int64
	if err := json.Unmarshal(s, &out); err != nil {
		return nil, fmt.Errorf("corrupt fact seqs %q: %w", s, err)
	}
	return out, nil
}

// validateKind checks what a point of its kind must have.
func validateKind(p rag.Point) error {
	switch p.Kind {
	case "", memory.KindTurn:
		if p.Seq > maxSeq {
			return fmt.Errorf("seq %d above %d", p.Seq, int64(maxSeq))
		}
		if p.Passage < 0 || p.Passage > maxPassage {
			return fmt.Errorf("passage %d outside [0, %d]", p.Passage, maxPassage)
		}
		if p.PassageFrom < 0 || p.PassageTo < p.PassageFrom || p.TurnBytes < 0 {
			return fmt.Errorf("passage offsets [%d, %d) of a %d-byte turn are not a range", p.PassageFrom, p.PassageTo, p.TurnBytes)
		}
	case memory.KindEpisode:
		if p.Seq > maxSeq {
			return fmt.Errorf("seq %d above %d", p.Seq, int64(maxSeq))
		}
	case memory.KindFact:
		if p.FactID == "" {
			return fmt.Errorf("fact without an id")
		}
		if len(p.Seqs) == 0 || p.Seqs[0] != p.Seq {
			return fmt.Errorf("fact %s: seq %d is not its first source seq %v", p.FactID, p.Seq, p.Seqs)
		}
	default:
		return fmt.Errorf("unknown kind %q", p.Kind)
	}
	return nil
}
