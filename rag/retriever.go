package rag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/bigsort"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// MaxQueryBytes caps the query text that is embedded and encoded; a longer
// query is truncated (at a rune boundary), not rejected.
const MaxQueryBytes = 8 << 10

// Neighbors reads the turns around a hit.
type Neighbors interface {
	MessagesBySeq(ctx context.Context, key memory.ChatKey, seqs []int64) ([]memory.Message, error)
}

// Retriever serves /v1/context's RAG section and /v1/search: it embeds the
// query, asks the index for hybrid hits in scope, drops turns the caller
// already shows verbatim, groups the passages of a long turn into one hit,
// ranks superseded facts below current ones, drops near-duplicates, and
// adds neighbouring turns from the store.
type Retriever struct {
	Embedder Embedder
	Sparse   *SparseEncoder // nil: default parameters
	Index    Index
	Store    Neighbors // for neighbours; nil: no neighbours
	// NearDuplicate is the Jaccard similarity of two hits' term sets at or
	// above which the lower-ranked one is dropped (0: DefaultNearDuplicate;
	// negative: keep near-duplicates).
	NearDuplicate float64

	terms   hitCache[[]uint32]   // hits' term sets, by hit identity and length
	choices hitCache[chosenWord] // what the hits choose, the same way
}

// Ranking parameters (docs/retrieval.md).
const (
	// DefaultNearDuplicate: hits sharing 80% of their terms (stemmed, no
	// stopwords) say the same thing; the better-ranked one is kept.
	DefaultNearDuplicate = 0.8
	// SupersededFactWeight multiplies the score of a superseded fact. Facts
	// on one subject match a question about it on both sides of the hybrid
	// query, where fused scores lie within 2/(RRFK+1)..2/(RRFK+30): 0.8
	// puts a superseded fact ranked first below its current fact ranked
	// up to about tenth, and keeps it above hits only one side found (a
	// superseded fact stays findable: "what did I say before?"). Scored by
	// relevance (a context), it is also kept under the current facts
	// found in its chat (belowCurrentFacts).
	SupersededFactWeight = 0.8
	// MaxPassagesPerTurn is how many matching passages of one long turn a
	// hit carries (the best ones, shown in content order); the others the
	// query matched come in Turn.More, for the packer to show when they
	// earn their room. One: showing a second passage of every long turn
	// spent room other turns needed (BEAM 100K at 8k: recall 0.765 with one
	// against 0.715 with two, containment equal).
	MaxPassagesPerTurn = 1
	// SplitTurnDiscount weighs down a turn indexed in several passages:
	// its score, that of its best passage, is divided by
	// 1 + SplitTurnDiscount·ln(P), P being the turn's length in passages.
	// A turn of P passages has P chances to rank first where a short turn
	// has one, so the best of its passages overstates how well the turn
	// matches (the same bias as a long document scored by its best
	// passage). Turns of one passage are left alone. 0.5: BEAM 100K recall
	// at 2k 0.641 → 0.682, 8k 0.872 → 0.882; 0.2 to 1 gave 0.675–0.695 at
	// 2k (docs/evaluation.md).
	SplitTurnDiscount = 0.5
	// AdjacentTurnWeight adds to a turn's score this share of the scores
	// of the turns just before and after it among the candidates, when
	// hits are shown with their neighbours (Retrieve with Neighbors; not
	// Search). A conversation answers in exchanges: a turn whose question
	// or answer matches the query too sits in a stretch about the subject,
	// which its neighbours then show, where a turn matching alone is more
	// often a passing mention. 0.3: BEAM 100K recall at 2k 0.682 → 0.695,
	// 8k 0.882 → 0.907; LoCoMo dev recall up at every budget. Without
	// neighbours shown it costs the first ranks (LoCoMo BM25 recall@5
	// 0.551 → 0.437), hence not in Search (docs/evaluation.md).
	AdjacentTurnWeight = 0.3
)

// Elision marks the text of a long turn left out around and between its
// matching passages in Turn.Content.
const Elision = "[…]"

// Request is one retrieval.
type Request struct {
	Tenant, ChatID, UserID, Query string
	// K is the number of hits wanted (neighbours come on top); default 5.
	K int
	// Threshold drops dense candidates with a lower cosine similarity
	// (sparse matches are kept); 0 = none.
	Threshold float32
	// Scope is "chat" (default: this chat only), "user" (every chat of
	// UserID in the tenant, this one included; falls back to "chat" when
	// UserID is empty) or "tenant" (every chat of the tenant, narrowed to
	// UserID when set; for /v1/search).
	Scope string
	// Neighbors adds up to this many turns on each side of every hit.
	Neighbors int
	// Turns, when set, is where this request's neighbours are read instead
	// of the Retriever's Store (e.g. through the caller's cache of turns).
	Turns Neighbors
	// ExcludeFromSeq: turns of THIS chat with seq >= it are in the caller's
	// recent window and are never returned (0 = exclude nothing).
	ExcludeFromSeq int64
	// Since/Until (zero: open; a fact's time is its valid_at) and Kinds
	// (empty: turns, episodes and facts) are applied inside the index
	// query, before top-k.
	Since, Until time.Time
	Kinds        []string
	// Drill: the best this many episode hits are drilled into for their
	// best-matching turns (coarse to fine); 0 = none.
	Drill int
}

// Turn is one retrieved turn.
type Turn struct {
	ChatID    string
	Seq       int64
	Role      string
	Content   string
	CreatedAt time.Time
	// Score is the fused RRF score of a hit; a neighbour carries the score
	// of the best hit it accompanies, so packing by score keeps it with it.
	Score float32
	// Similarity is the hit's cosine similarity to the query when the dense
	// side ranked it (0 for sparse-only hits and neighbours).
	Similarity float32
	// Neighbor marks a turn added for context around a hit.
	Neighbor bool
	// Chosen marks a neighbour that put forward the option a hit chose
	// ("1) … 2) Move Zigbee to channel 25" before "ok do the second one"):
	// the other half of the choice, as an answer is of its question.
	Chosen bool
	// ChoseFrom, on a turn choosing an option by its place, is the seq of
	// the turn listing the options (Chosen), 0 for others.
	ChoseFrom int64

	// Kind is memory.KindTurn (""), memory.KindEpisode or memory.KindFact.
	// An episode hit has its short summary as Content, Seq = FromSeq,
	// CreatedAt = EndedAt, and its range in Episode. A fact hit has the
	// fact as Content, its first source seq as Seq, CreatedAt = ValidAt,
	// and its sources in Fact. (Behind pointers: a request moves tens of
	// Turns through several slices, and few are episodes or facts.)
	Kind    string
	Episode *EpisodeHit
	Fact    *FactHit
	// StandsIn marks a standing instruction's fact offered beside the
	// turn stating it, to be shown in its place when the turn does not
	// fit (not a hit: the engine adds it).
	StandsIn bool

	// A turn indexed in passages (longer than the indexer's passage size)
	// comes once, with up to MaxPassagesPerTurn matching passages in
	// content order; Content is then their text joined by Elision marks
	// where the turn's text is left out, and TurnBytes is the whole turn's
	// length. A turn matched whole has no Passages.
	Passages  []Passage
	TurnBytes int
	// More are the turn's other passages the query matched, beyond
	// MaxPassagesPerTurn, best first, each scored as a hit of its own:
	// the packer may show them beside Passages when they earn their room
	// (a log whose error line and failing test fell into two passages).
	More []Passage

	// terms: Hit.Terms (nil: derive from Content)
	terms []uint32
}

// EpisodeHit is an episode hit's identity, range and dates.
type EpisodeHit struct {
	ID                 string
	FromSeq, ToSeq     int64
	StartedAt, EndedAt time.Time
}

// FactHit is a fact hit's identity and sources. A superseded fact (a newer
// one updates it) has its score multiplied by SupersededFactWeight.
type FactHit struct {
	ID         string
	Seqs       []int64
	ValidAt    time.Time
	Superseded bool
}

// Passage is a matching passage of a long turn: its number, its byte
// offsets [From, To) into the turn's content, its text and its score.
type Passage struct {
	N        int
	From, To int
	Text     string
	Score    float32
}

// Scope values.
const (
	ScopeChat   = "chat"
	ScopeUser   = "user"
	ScopeTenant = "tenant"
)

// DefaultK is the number of hits when a request names none.
const DefaultK = 5

// Retrieve returns the hits for req plus their neighbours, in chronological
// order (CreatedAt, then chat, seq and kind); callers that pack under a budget
// sort by Score. Failures wrap ErrEmbedder or ErrIndexUnavailable so the
// caller can report the degraded reason.
func (r *Retriever) Retrieve(ctx context.Context, req Request) ([]Turn, error) {
	if req.Tenant == "" {
		return nil, errors.New("retrieve: tenant is required")
	}
	// No agent in the filter: an agent chooses settings, it does not own
	// memory, so a user's chats under other agents are in scope "user".
	f := Filter{Tenant: req.Tenant, Since: req.Since, Until: req.Until, Kinds: req.Kinds}
	switch {
	case req.Scope == ScopeTenant:
		f.UserID = req.UserID
	case req.Scope == ScopeUser && req.UserID != "":
		f.UserID = req.UserID
	default:
		if req.ChatID == "" {
			return nil, errors.New("retrieve: chat_id is required for chat scope")
		}
		f.ChatIDs = []string{req.ChatID}
	}
	k := req.K
	if k <= 0 {
		k = DefaultK
	}
	excluded := func(chat string, seq int64) bool {
		return req.ExcludeFromSeq > 0 && chat == req.ChatID && seq >= req.ExcludeFromSeq
	}
	// Hits shown with their neighbours rank by their exchange too; hits
	// packed into a context rank by how well they matched.
	o := rankOpts{adjacent: req.Neighbors > 0 && r.Store != nil, relevance: true, kinds: askedKindsOf(req.Query)}
	q, err := r.encode(ctx, req.Query)
	if err != nil {
		return nil, err
	}
	o.query = slices.Sorted(slices.Values(q.sparse.Indices))
	hits, complete, err := r.search(ctx, f, q, k, req.Threshold, excluded, o)
	if err != nil || len(hits) == 0 {
		return hits, err
	}
	// A drill asks for turns within f, with the same query and threshold:
	// after a complete search over turns, each is a hit or excluded.
	if req.Drill > 0 && !(complete && hasKind(f.Kinds, memory.KindTurn)) {
		if hits, err = r.drill(ctx, f, q, req, hits, excluded); err != nil {
			return nil, err
		}
	}
	if req.Neighbors > 0 && r.Store != nil {
		src := r.Store
		if req.Turns != nil {
			src = req.Turns
		}
		if hits, err = r.addNeighbors(ctx, src, req, hits, excluded); err != nil {
			return nil, err
		}
		if hits, err = r.addChosen(ctx, src, req, hits, excluded); err != nil {
			return nil, err
		}
	}
	bigsort.Stable(hits, func(a, b *Turn) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ChatID, b.ChatID), cmp.Compare(a.Seq, b.Seq),
			strings.Compare(a.Kind, b.Kind))
	})
	return hits, nil
}

// SearchRequest is one /v1/search: scoped to a chat when ChatID is set,
// else to a user's chats when UserID is set, else to the whole tenant.
type SearchRequest struct {
	Tenant, ChatID, UserID, Query string
	K                             int
	Threshold                     float32
	// Since/Until/Kinds filter inside the index query, before top-k
	// (empty Kinds: all kinds).
	Since, Until time.Time
	Kinds        []string
}

// Search returns up to K hits, best first (no neighbours, no exclusions).
func (r *Retriever) Search(ctx context.Context, req SearchRequest) ([]Turn, error) {
	if req.Tenant == "" {
		return nil, errors.New("search: tenant is required")
	}
	f := Filter{Tenant: req.Tenant, UserID: req.UserID, Since: req.Since, Until: req.Until, Kinds: req.Kinds}
	if req.ChatID != "" {
		f.ChatIDs = []string{req.ChatID}
	}
	k := req.K
	if k <= 0 {
		k = DefaultK
	}
	q, err := r.encode(ctx, req.Query)
	if err != nil {
		return nil, err
	}
	hits, _, err := r.search(ctx, f, q, k, req.Threshold, nil, rankOpts{})
	return hits, err
}

// encodedQuery is a query embedded once for every index query of a
// request (the hits, then each episode drilled into).
type encodedQuery struct {
	dense  []float32
	sparse SparseVector
	empty  bool // nothing to search for
}

func (r *Retriever) encode(ctx context.Context, query string) (encodedQuery, error) {
	query = TruncateQuery(query)
	if strings.TrimSpace(query) == "" {
		return encodedQuery{empty: true}, nil
	}
	dense, err := r.Embedder.EmbedQuery(ctx, query)
	if err != nil {
		return encodedQuery{}, fmt.Errorf("retrieve: %w", AsEmbedderError(err))
	}
	return encodedQuery{dense: dense, sparse: r.Sparse.EncodeQuery(query)}, nil
}

// search runs the hybrid query, over-fetching until k hits survive the
// exclusion (or the index has nothing more). Hits come best first;
// adjacent adds the scores of adjacent hits (addAdjacentScores), for hits
// that will be shown with their neighbours.
//
// complete reports that the hits hold every point of f that qualifies
// (each hit or excluded): the index returned fewer than asked, so it had
// no more (Query's contract), and rank dropped none as a near-duplicate or
// past k.
func (r *Retriever) search(ctx context.Context, f Filter, q encodedQuery, k int, threshold float32,
	excluded func(string, int64) bool, o rankOpts) (_ []Turn, complete bool, _ error) {
	if q.empty {
		return nil, true, nil
	}
	dense, sparse := q.dense, q.sparse

	// The recent window is usually small (tens of turns): ask for k plus a
	// margin, and widen when exclusions ate too many.
	limit := k
	if excluded != nil {
		limit = k + k/4 + 16
	}
	for attempt := 0; ; attempt++ {
		hits, err := r.Index.Query(ctx, Query{Filter: f, Dense: dense, Sparse: sparse, Limit: limit, ScoreThreshold: threshold})
		if err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrIndexUnavailable, err)
		}
		out, dropped := r.rank(hits, k, excluded, o)
		if len(out) == k || len(hits) < limit || attempt == 3 {
			return out, len(hits) < limit && dropped == 0, nil
		}
		limit *= 4
	}
}

// rank turns index hits (best first) into the k best results (and how
// many turns it dropped as near-duplicates or past k): excluded
// turns dropped, a long turn's passages grouped into one hit, superseded
// facts and split turns discounted, adjacent hits' scores added (when
// adjacent), near-duplicates of better hits dropped.
func (r *Retriever) rank(hits []Hit, k int, excluded func(string, int64) bool, o rankOpts) (_ []Turn, dropped int) {
	if o.relevance {
		relevance(hits)
		if len(o.kinds.kinds) > 0 {
			belowKindless(hits, o.kinds)
		}
	}
	out := make([]Turn, 0, len(hits))
	grouped := map[turnRef]int{} // a long turn's index in out
	for _, h := range hits {
		if excluded != nil && excluded(h.ChatID, h.Seq) {
			continue
		}
		t := hitTurn(h)
		if len(t.Passages) > 0 {
			tk := turnRef{h.ChatID, h.Seq}
			if i, ok := grouped[tk]; ok {
				if len(out[i].Passages) < MaxPassagesPerTurn {
					out[i].Passages = append(out[i].Passages, t.Passages[0])
					out[i].terms = nil // its content joins passages now
				} else {
					more := t.Passages[0]
					more.Score *= splitTurnWeight(t)
					out[i].More = append(out[i].More, more)
				}
				continue
			}
			grouped[tk] = len(out)
		}
		if t.Fact != nil && t.Fact.Superseded {
			t.Score *= SupersededFactWeight
		}
		t.Score *= splitTurnWeight(t)
		out = append(out, t)
	}
	for i := range out {
		if len(out[i].Passages) > 0 {
			out[i].Content = JoinPassages(out[i].Passages, out[i].TurnBytes)
		}
	}
	if o.relevance {
		belowCurrentFacts(out)
	}
	if o.adjacent {
		addAdjacentScores(out)
	}
	bigsort.Stable(out, func(a, b *Turn) int { return cmp.Compare(b.Score, a.Score) })
	tenant := ""
	if len(hits) > 0 {
		tenant = hits[0].Tenant // one query, one tenant
	}
	kept := r.dropNearDuplicates(tenant, out, k, o.query)
	return kept, len(out) - len(kept)
}

// rankOpts say how rank scores: adjacent adds the neighbouring hits'
// scores (addAdjacentScores); relevance scores hits by how well they
// matched rather than where they ranked (relevance).
type rankOpts struct {
	adjacent, relevance bool
	kinds               askedKinds // relevance: hits holding none count less (belowKindless)
	// query is the query's sparse ids, sorted: a context's, where a later
	// near-copy stands in for an earlier one (laterCopy). Nil (a search):
	// the better-ranked copy is kept.
	query []uint32
}

// relevance scores each hit by how well it matched: each side's own score
// (rag.Hit) relative to that side's best among the hits, summed over the
// sides. The fused rank chose the candidates, but its 1/(60+rank) is
// nearly flat (the 40th hit keeps 0.6 of the first's score, whatever
// their words), and a context packed by relevance per token then takes
// "ok do the second one" before the log line that answers. Hits from an
// index that reports no side scores keep their fused score.
func relevance(hits []Hit) {
	var bestDense, bestSparse float32
	for _, h := range hits {
		bestDense, bestSparse = max(bestDense, h.DenseScore), max(bestSparse, h.SparseScore)
	}
	if bestDense <= 0 && bestSparse <= 0 {
		return
	}
	for i, h := range hits {
		var s float32
		if bestDense > 0 {
			s += max(h.DenseScore, 0) / bestDense
		}
		if bestSparse > 0 {
			s += max(h.SparseScore, 0) / bestSparse
		}
		hits[i].Score = s
	}
}

// kindlessWeight: a hit holding no value of the kind the question asks
// for counts this much of its match. "whats the vet's number?" asks for
// a phone number; "perfect. and someone needs to get milk in at the new
// flat" matches "new" and "needs" of "whats Mum's full new address, the
// bank needs it" as well as the turn with the address does, and answers
// nothing. Held-out chats, each batch written before the rule and run
// before it was read: 91–94 11 / 64 → 10 / 62 (stale / absent), 83–94
// 25 / 144 → 24 / 138; LoCoMo and BEAM 100K within 0.005
// (docs/evaluation.md, "Seventeenth pass").
const kindlessWeight = 0.75

// askedKinds are the value kinds a query asks for, as the sparse ids a
// hit holding one carries (lex.AskedKinds). A question asking when is
// answered by any turn saying "yesterday" or "next week" too (its block's
// header shows its date): their words count as the kind.
type askedKinds struct {
	kinds []string
	ids   []uint32 // sorted
	when  bool     // a day or a time asked
}

func askedKindsOf(query string) askedKinds {
	a := askedKinds{kinds: lex.AskedKinds(query)}
	for _, k := range a.kinds {
		a.ids = append(a.ids, TermID(k))
		if k == lex.KindDay || k == lex.KindTime {
			a.when = true
		}
	}
	if a.when {
		for w := range relativeWhen {
			a.ids = append(a.ids, TermID(lex.Stem(w)))
		}
	}
	slices.Sort(a.ids)
	a.ids = slices.Compact(a.ids)
	return a
}

// relativeWhen are the words that say when relative to a turn's date.
var relativeWhen = lex.Set(`yesterday today tonight tomorrow ago last next week weeks weekend weekends month months
	year years morning mornings afternoon afternoons evening evenings night nights`)

// heldBy: the hit holds a value of an asked kind. A turn hit carries its
// sparse ids (the kinds among them); another is read, its words only
// when a day or a time is asked.
func (a askedKinds) heldBy(h Hit) bool {
	if h.Terms != nil {
		for _, id := range a.ids {
			if _, ok := slices.BinarySearch(h.Terms, id); ok {
				return true
			}
		}
		return false
	}
	for _, k := range lex.ValueKinds(h.Content) {
		if slices.Contains(a.kinds, k) {
			return true
		}
	}
	return a.when && slices.ContainsFunc(lex.Runs(h.Content), func(w string) bool { return relativeWhen[w] })
}

// belowKindless scores the hits holding no value of an asked kind at
// kindlessWeight of their match.
func belowKindless(hits []Hit, a askedKinds) {
	for i, h := range hits {
		if !a.heldBy(h) {
			hits[i].Score *= kindlessWeight
		}
	}
}

// belowCurrentFacts keeps a superseded fact under the current facts the
// query found in its chat (SupersededFactWeight times the best one's
// score, at most): scored by how well it matched, "the user lives in
// Berlin" matches "do I live in Berlin?" better than "the user moved to
// Munich" does, yet the current fact is the answer, and the old one only
// its history.
func belowCurrentFacts(ts []Turn) {
	best := map[string]float32{}
	for _, t := range ts {
		if t.Fact != nil && !t.Fact.Superseded {
			best[t.ChatID] = max(best[t.ChatID], t.Score)
		}
	}
	for i, t := range ts {
		if b, ok := best[t.ChatID]; ok && t.Fact != nil && t.Fact.Superseded {
			ts[i].Score = min(t.Score, SupersededFactWeight*b)
		}
	}
}

// addAdjacentScores adds to each turn AdjacentTurnWeight times the scores
// of the turns next to it (same chat, seq ± 1) among ranked, as they were
// before any was added to. Facts and episodes neither give nor take.
func addAdjacentScores(ranked []Turn) {
	base := make(map[turnRef]float32, len(ranked))
	for _, t := range ranked {
		if isTurn(t) {
			base[turnRef{t.ChatID, t.Seq}] = t.Score
		}
	}
	for i, t := range ranked {
		if isTurn(t) {
			next := base[turnRef{t.ChatID, t.Seq - 1}] + base[turnRef{t.ChatID, t.Seq + 1}]
			ranked[i].Score += AdjacentTurnWeight * next
		}
	}
}

// splitTurnWeight is the weight of a hit for the passages its turn was
// split into (SplitTurnDiscount): 1 for a turn matched whole, or for
// anything not a passage of a longer turn.
func splitTurnWeight(t Turn) float32 {
	if len(t.Passages) == 0 {
		return 1
	}
	p := t.Passages[0]
	size := p.To - p.From
	if size <= 0 || t.TurnBytes <= size {
		return 1
	}
	return float32(1 / (1 + SplitTurnDiscount*math.Log(float64(t.TurnBytes)/float64(size))))
}

// hitTurn is a hit as a result; a passage of a long turn carries it in
// Passages.
func hitTurn(h Hit) Turn {
	t := Turn{ChatID: h.ChatID, Seq: h.Seq, Role: h.Role, Content: h.Content,
		CreatedAt: h.CreatedAt, Score: h.Score, Similarity: h.DenseScore, Kind: h.Kind, terms: h.Terms}
	switch h.Kind {
	case memory.KindEpisode:
		t.Episode = &EpisodeHit{ID: h.EpisodeID, FromSeq: h.FromSeq, ToSeq: h.ToSeq, StartedAt: h.StartedAt, EndedAt: h.EndedAt}
	case memory.KindFact:
		t.Fact = &FactHit{ID: h.FactID, Seqs: h.Seqs, ValidAt: h.ValidAt, Superseded: h.Superseded}
	}
	if (h.Kind == "" || h.Kind == memory.KindTurn) && !h.IsWhole() {
		t.TurnBytes = h.TurnBytes
		t.Passages = []Passage{{N: h.Passage, From: h.PassageFrom, To: h.PassageTo, Text: h.Content, Score: h.Score}}
	}
	return t
}

// JoinPassages is a long turn's passages in content order, with Elision
// marks where text is left out; passages that touch are joined by a line
// break (a passage ends at a paragraph or a sentence).
func JoinPassages(ps []Passage, turnBytes int) string {
	slices.SortFunc(ps, func(a, b Passage) int { return cmp.Compare(a.From, b.From) })
	var b strings.Builder
	pos := 0
	for _, p := range ps {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if p.From > pos {
			b.WriteString(Elision + "\n")
		}
		b.WriteString(strings.TrimSpace(p.Text))
		pos = max(pos, p.To)
	}
	if pos < turnBytes {
		b.WriteString("\n" + Elision)
	}
	return b.String()
}

// dropNearDuplicates keeps up to k results (best first), skipping each one
// whose term set has a Jaccard similarity of at least the threshold with
// one already kept.
func (r *Retriever) dropNearDuplicates(tenant string, ranked []Turn, k int, query []uint32) []Turn {
	limit := r.NearDuplicate
	if limit == 0 {
		limit = DefaultNearDuplicate
	}
	if limit < 0 {
		return ranked[:min(k, len(ranked))]
	}
	kept := ranked[:0]
	terms := make([][]uint32, 0, k)
	sketches := make([]termSketch, 0, k)
	for _, t := range ranked {
		if len(kept) == k {
			break
		}
		ts := t.terms
		if ts == nil {
			ts = r.terms.get(tenant, t, termSet)
		}
		sk := sketchOf(ts)
		dup := false
		for i, o := range terms {
			// |a∩b|/|a∪b| <= min/max of the sizes: most pairs need no merge.
			if small, large := min(len(ts), len(o)), max(len(ts), len(o)); float64(small) < limit*float64(large) {
				continue
			}
			if sk.farFrom(sketches[i], len(ts)+len(o), limit) || jaccard(ts, o) < limit {
				continue
			}
			dup = true
			if query != nil && laterCopy(t, kept[i]) && holdsMatched(ts, o, query) {
				kept[i], terms[i], sketches[i] = withScore(t, kept[i].Score), ts, sk
			}
			break
		}
		if !dup {
			kept = append(kept, t)
			terms = append(terms, ts)
			sketches = append(sketches, sk)
		}
	}
	return kept
}

// laterCopy: t is a later turn of the chat of o, a near-copy of it
// with another value. A chat that says nearly the same thing twice with
// a value changed has changed it in between ("Speckled mug, £28.00 …"
// then, after a price rise, "Speckled mug, £32.00 …"): the later copy is
// the one that holds, so it stands in the place the better-ranked copy
// earned.
func laterCopy(t, o Turn) bool {
	return isTurn(t) && isTurn(o) && t.ChatID == o.ChatID && t.Seq > o.Seq && !slices.Equal(numbersIn(t.Content), numbersIn(o.Content))
}

// numbersIn are the words of content holding a digit, sorted: what a
// later copy changed, where it changed a value ("£28.00" → "£32.00"). Two
// copies differing in their words only say the same thing again.
func numbersIn(content string) []string {
	var out []string
	for _, w := range strings.Fields(content) {
		if strings.IndexAny(w, "0123456789") >= 0 {
			out = append(out, strings.Trim(w, ".,;:!?()\"'"))
		}
	}
	slices.Sort(out)
	return out
}

// holdsMatched: the term set ts holds every query term that o holds. A
// later copy that lacks a word the query found in the earlier one is not
// the same answer ("Turn m1122 …" asked for, "Turn m3077 …" the later
// copy).
func holdsMatched(ts, o, query []uint32) bool {
	for _, id := range query {
		if _, in := slices.BinarySearch(o, id); in {
			if _, ok := slices.BinarySearch(ts, id); !ok {
				return false
			}
		}
	}
	return true
}

// withScore is t with score s.
func withScore(t Turn, s float32) Turn {
	t.Score = s
	return t
}

// termSketch is a 256-bit set of a term set's hashed terms. Every bit set
// in one sketch and not the other stands for at least one term in one set
// and not the other, so the popcount of the XOR is at most |a Δ b|, and
// Jaccard(a, b) >= t needs |a Δ b| <= (1-t)(|a|+|b|)/(1+t). farFrom tells
// most unrelated pairs apart in four popcounts, before the exact merge
// (which was a twentieth of a rag_augmented request's CPU). Exact: it
// never drops a pair the merge would call near-duplicates.
type termSketch [4]uint64

func sketchOf(ts []uint32) termSketch {
	var s termSketch
	for _, t := range ts {
		b := (t * 0x9E3779B1) >> 24 // 0..255
		s[b>>6] |= 1 << (b & 63)
	}
	return s
}

// farFrom reports that the sets behind s and o (n terms between them) are
// certainly less than t alike.
func (s termSketch) farFrom(o termSketch, n int, t float64) bool {
	d := 0
	for i := range s {
		d += bits.OnesCount64(s[i] ^ o[i])
	}
	// The margin keeps it conservative where float rounding meets a pair
	// exactly at t (0.2 is not exact in binary).
	return float64(d)*(1+t) > (1-t)*float64(n)+1e-6
}

// termSet is text's term ids (as in its sparse vector), sorted and unique.
func termSet(text string) []uint32 {
	terms := lex.Terms(text)
	ids := make([]uint32, len(terms))
	for i, t := range terms {
		ids[i] = TermID(t)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted, unique sets (0 when both
// are empty: texts without terms are never called duplicates).
func jaccard(a, b []uint32) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// drillTurns is how many turns each drilled episode contributes.
const drillTurns = 2

// drill goes coarse to fine: for the best req.Drill episode hits it asks the
// index for the episode's own best-matching turns (its seq range, turns
// only) and adds those not already there, with the episode's score, so the
// packer weighs the turns against the episode's summary.
func (r *Retriever) drill(ctx context.Context, f Filter, q encodedQuery, req Request, hits []Turn, excluded func(string, int64) bool) ([]Turn, error) {
	have := turnsIn(hits)
	drilled := 0
	for i, n := 0, len(hits); i < n; i++ { // the hits as they came: drilled turns are appended
		ep := hits[i]
		if ep.Kind != memory.KindEpisode || ep.Episode == nil || drilled == req.Drill {
			continue
		}
		drilled++
		if covered(have, ep, excluded) {
			continue // every turn of it is a hit already: the query would add none
		}
		g := f
		g.ChatIDs, g.Kinds, g.FromSeq, g.ToSeq = []string{ep.ChatID}, []string{memory.KindTurn}, ep.Episode.FromSeq, ep.Episode.ToSeq
		turns, _, err := r.search(ctx, g, q, drillTurns, req.Threshold, excluded, rankOpts{})
		if err != nil {
			return nil, err
		}
		for _, t := range turns {
			if k := (turnRef{t.ChatID, t.Seq}); !have[k] {
				have[k] = true
				t.Score = ep.Score
				hits = append(hits, t)
			}
		}
	}
	return hits, nil
}

// hasKind reports whether a filter's kinds (none: all) include kind.
func hasKind(kinds []string, kind string) bool {
	return len(kinds) == 0 || slices.Contains(kinds, kind)
}

// covered reports whether every turn of episode ep is among the hits or
// excluded (small chats: the hits often hold them all).
func covered(have map[turnRef]bool, ep Turn, excluded func(string, int64) bool) bool {
	e := ep.Episode
	if e == nil || e.ToSeq < e.FromSeq {
		return false // no range known: drill
	}
	for s := e.FromSeq; s <= e.ToSeq; s++ {
		if !have[turnRef{ep.ChatID, s}] && !excluded(ep.ChatID, s) {
			return false
		}
	}
	return true
}

// addNeighbors adds the turns within req.Neighbors seqs of each hit (same
// chat), not excluded, not already present and within req's since/until,
// fetched from the store.
func (r *Retriever) addNeighbors(ctx context.Context, src Neighbors, req Request, hits []Turn,
	excluded func(string, int64) bool) ([]Turn, error) {
	n := req.Neighbors
	have := turnsIn(hits)
	want := map[string]map[int64]float32{} // chat -> seq -> best score of a hit it neighbours
	for _, h := range hits {
		if !isTurn(h) {
			continue // an episode or a fact has no neighbouring turns of its own
		}
		last := int64(n)
		if asksGroup(h.Content) {
			last = max(last, groupAnswers) // the answers of several people
		}
		for d := int64(-n); d <= last; d++ {
			s := h.Seq + d
			if d == 0 || s < 1 || have[turnRef{h.ChatID, s}] || excluded(h.ChatID, s) {
				continue
			}
			m := want[h.ChatID]
			if m == nil {
				m = map[int64]float32{}
				want[h.ChatID] = m
			}
			m[s] = max(m[s], h.Score)
		}
	}
	chats := make([]string, 0, len(want))
	extra := 0
	for c, m := range want {
		chats = append(chats, c)
		extra += len(m)
	}
	slices.Sort(chats)
	hits = slices.Grow(hits, extra) // once: a Turn is ~300 bytes
	for _, chat := range chats {
		var err error
		if hits, err = r.readNeighbors(ctx, src, req, chat, want[chat], hits, have, excluded); err != nil {
			return nil, err
		}
	}
	return hits, nil
}

// groupAnswers is how many turns after a question asked of a group a
// hit brings: several people answer it, one after another ("ok whats
// everyone's new address for the deposit form", then three addresses).
const groupAnswers = 3

// groupWords put a question to everyone in a chat.
var groupWords = [...]string{"everyone", "everybody", "every1", "you all", "all of you", "each of you", "y'all", "yall", "you guys"}

// asksGroup: content ends with a question put to a group. It runs on
// every hit, and a regular expression over the question was 2% of a
// rag_augmented request's CPU: the words are looked for as whole words
// (between bytes that are not ASCII letters, digits or '_', as a
// regular expression's \b), in any case.
func asksGroup(content string) bool {
	if !lex.EndsWithQuestion(content) {
		return false
	}
	q := strings.ToLower(lex.LastQuestion(content))
	for _, w := range groupWords {
		if hasWholeWord(q, w) {
			return true
		}
	}
	return false
}

// hasWholeWord: w is in s with no ASCII word byte either side.
func hasWholeWord(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		if end := i + len(w); (i == 0 || !reWordByte(s[i-1])) && (end == len(s) || !reWordByte(s[end])) {
			return true
		}
		from = i + 1
	}
}

// reWordByte: c is a word byte to a regular expression's \b.
func reWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// readNeighbors reads one chat's neighbours (seq → score) and appends them
// to hits. A neighbour after a shown turn that asks a question ("same
// price?") brings the turn after it, its answer, read the same way: an
// exchange is not cut at its question.
func (r *Retriever) readNeighbors(ctx context.Context, src Neighbors, req Request, chat string, want map[int64]float32,
	hits []Turn, have map[turnRef]bool, excluded func(string, int64) bool) ([]Turn, error) {
	for round := 0; round < 2 && len(want) > 0; round++ { // the neighbours, then the answers of their questions
		seqs := make([]int64, 0, len(want))
		for s := range want {
			seqs = append(seqs, s)
		}
		slices.Sort(seqs)
		msgs, err := src.MessagesBySeq(ctx, memory.ChatKey{Tenant: req.Tenant, ChatID: chat}, seqs)
		if errors.Is(err, memory.ErrNotFound) {
			return hits, nil // chat deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("retrieve: neighbours of chat %s: %w", chat, err)
		}
		answers := map[int64]float32{}
		for _, m := range msgs {
			score, ok := want[m.Seq]
			if !ok || have[turnRef{chat, m.Seq}] || !req.inTime(m.CreatedAt) {
				continue // a neighbour outside since/until is not retrieved either
			}
			have[turnRef{chat, m.Seq}] = true
			hits = append(hits, Turn{ChatID: chat, Seq: m.Seq, Role: string(m.Role), Content: m.Content,
				CreatedAt: m.CreatedAt, Score: score, Neighbor: true})
			if next := m.Seq + 1; round == 0 && lex.EndsWithQuestion(m.Content) && have[turnRef{chat, m.Seq - 1}] && !have[turnRef{chat, next}] && !excluded(chat, next) {
				answers[next] = score
			}
		}
		want = answers
	}
	return hits, nil
}

// inTime reports whether t is within the request's since/until (zero:
// open) as both indexes filter hits: in whole seconds, ends included.
func (req Request) inTime(t time.Time) bool {
	s := t.Unix()
	return (req.Since.IsZero() || s >= req.Since.Unix()) && (req.Until.IsZero() || s <= req.Until.Unix())
}

// turnsIn is the set of the turns among hits (episodes and facts left out).
func turnsIn(hits []Turn) map[turnRef]bool {
	have := make(map[turnRef]bool, len(hits))
	for _, h := range hits {
		if isTurn(h) {
			have[turnRef{h.ChatID, h.Seq}] = true
		}
	}
	return have
}

// turnRef names a turn among hits of several chats.
type turnRef struct {
	chat string
	seq  int64
}

func isTurn(t Turn) bool { return t.Kind == "" || t.Kind == memory.KindTurn }

// id is an episode's or a fact's id ("" for a turn).
func (t *Turn) id() string {
	switch {
	case t.Episode != nil:
		return t.Episode.ID
	case t.Fact != nil:
		return t.Fact.ID
	}
	return ""
}

// TruncateQuery cuts q to MaxQueryBytes at a rune boundary.
func TruncateQuery(q string) string {
	if len(q) <= MaxQueryBytes {
		return q
	}
	cut := MaxQueryBytes
	// Back up to the start of the rune the cut falls in (at most 3 bytes).
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(q[cut]); i++ {
		cut--
	}
	return q[:cut]
}
