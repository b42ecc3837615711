// The file: the SQLite schema, the statements that read hit payloads and
// the encodings of vectors on disk.

package embedded

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/contextd/contextd/rag"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
	tenant     TEXT    NOT NULL,
	chat_id    TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	user_id    TEXT    NOT NULL,
	agent      TEXT    NOT NULL,
	role       TEXT    NOT NULL,
	content    TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	dense      BLOB    NOT NULL,
	sparse     BLOB    NOT NULL,
	to_seq     INTEGER NOT NULL DEFAULT 0,
	started_at INTEGER NOT NULL DEFAULT 0,
	episode_id TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (tenant, chat_id, seq)
);
CREATE INDEX IF NOT EXISTS points_user ON points (tenant, user_id);
CREATE INDEX IF NOT EXISTS points_payload ON points (tenant, chat_id, seq, created_at, role, content);
`

// readRange and readSeek read the payload of a chat's hits from
// points_payload, which holds the payload columns in (tenant, chat, seq)
// order, so a chat's rows sit together in few pages. The seqs wanted are a
// JSON array, so the statement text is fixed and prepared once. readRange
// walks the index from the lowest to the highest seq wanted, one seek in
// all ("+seq" keeps SQLite from seeking each); readSeek seeks each seq.
const (
	readRange = `SELECT seq, role, content, created_at FROM points INDEXED BY points_payload
	WHERE tenant = ?1 AND chat_id = ?2 AND seq BETWEEN ?3 AND ?4 AND substr(?5, seq - ?3 + 1, 1) = x'01'`
	readSeek = `SELECT seq, role, content, created_at FROM points INDEXED BY points_payload
	WHERE tenant = ? AND chat_id = ? AND seq IN (SELECT value FROM json_each(?))`
)

func (ix *Index) readErr(err error) error {
	if ix.isClosed() {
		return ErrClosed
	}
	return fmt.Errorf("embedded index: read hits: %w", err)
}

// addedColumns are added to files written before episodes (an episode's
// row has seq = its key, created_at its end), facts (created_at is the
// fact's valid_at; seqs a JSON array) and passages were indexed.
var addedColumns = []string{
	"to_seq INTEGER NOT NULL DEFAULT 0",
	"started_at INTEGER NOT NULL DEFAULT 0",
	"episode_id TEXT NOT NULL DEFAULT ''",
	"fact_id TEXT NOT NULL DEFAULT ''",
	"seqs TEXT NOT NULL DEFAULT ''",
	"superseded INTEGER NOT NULL DEFAULT 0",
	"passage_from INTEGER NOT NULL DEFAULT 0",
	"turn_bytes INTEGER NOT NULL DEFAULT 0",
}

// upsertPoint writes a point, replacing the one with the same key.
const upsertPoint = `INSERT INTO points (tenant, chat_id, seq, user_id, agent, role, content, created_at, dense, sparse,
		to_seq, started_at, episode_id, fact_id, seqs, superseded, passage_from, turn_bytes)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (tenant, chat_id, seq) DO UPDATE SET user_id = excluded.user_id, agent = excluded.agent,
		role = excluded.role, content = excluded.content, created_at = excluded.created_at,
		dense = excluded.dense, sparse = excluded.sparse,
		to_seq = excluded.to_seq, started_at = excluded.started_at, episode_id = excluded.episode_id,
		fact_id = excluded.fact_id, seqs = excluded.seqs, superseded = excluded.superseded,
		passage_from = excluded.passage_from, turn_bytes = excluded.turn_bytes`

// readExtra reads the fields only an episode's row (to_seq, started_at,
// episode_id) or a passage of a long turn's (passage_from, turn_bytes) has;
// prepared once, like readRange and readSeek.
const readExtra = `SELECT to_seq, started_at, episode_id, passage_from, turn_bytes FROM points
	WHERE tenant = ? AND chat_id = ? AND seq = ?`

// readExtraSeek is readExtra for several points of a chat (a JSON array of
// seqs), by primary key.
const readExtraSeek = `SELECT seq, to_seq, started_at, episode_id, passage_from, turn_bytes FROM points
	WHERE tenant = ? AND chat_id = ? AND seq IN (SELECT value FROM json_each(?))`

// noTime marks a point without a known time: a since/until filter never
// matches it.
const noTime = math.MinInt64

func unixSec(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return t.Unix()
}

func nanoToSec(n int64) int64 {
	if n == zeroTime {
		return noTime
	}
	return time.Unix(0, n).Unix()
}

// zeroTime stores the zero time.Time, which UnixNano cannot represent.
const zeroTime = math.MinInt64

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return zeroTime
	}
	return t.UnixNano()
}

// encodeDense stores a quantised vector as its float32 scale (little
// endian) followed by the int8 components: dim+4 bytes, a quarter of the
// float32 vector, so rows (and the file, and the pages read at start-up)
// are about 3× smaller.
func encodeDense(q []int8, scale float32) []byte {
	b := make([]byte, 4+len(q))
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	for i, x := range q {
		b[4+i] = byte(x)
	}
	return b
}

// decodeDense decodes a stored vector into q and returns its scale. Files
// written before quantisation hold float32 vectors (4*dim bytes): those are
// decoded into v and quantised. The two sizes never coincide (dim+4 =
// 4*dim has no integer solution).
func decodeDense(b []byte, v []float32, q []int8) (float32, error) {
	switch len(b) {
	case 4 + len(q):
		for i := range q {
			q[i] = int8(b[4+i])
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case 4 * len(v):
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return quantise(v, q), nil
	}
	return 0, fmt.Errorf("%w: stored vector has %d bytes, want %d (int8) or %d (float32)",
		rag.ErrDimensionMismatch, len(b), 4+len(q), 4*len(v))
}

func encodeSparse(s rag.SparseVector) []byte {
	b := make([]byte, 8*len(s.Indices))
	for i, idx := range s.Indices {
		binary.LittleEndian.PutUint32(b[8*i:], idx)
		binary.LittleEndian.PutUint32(b[8*i+4:], math.Float32bits(s.Values[i]))
	}
	return b
}

// decodeSparse decodes a stored sparse vector, reusing buf's slices.
func decodeSparse(b []byte, buf rag.SparseVector) (rag.SparseVector, error) {
	if len(b)%8 != 0 {
		return rag.SparseVector{}, fmt.Errorf("corrupt sparse vector (%d bytes)", len(b))
	}
	n := len(b) / 8
	s := rag.SparseVector{Indices: slices.Grow(buf.Indices[:0], n)[:n], Values: slices.Grow(buf.Values[:0], n)[:n]}
	for i := 0; i < n; i++ {
		s.Indices[i] = binary.LittleEndian.Uint32(b[8*i:])
		s.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:]))
	}
	return s, nil
}
