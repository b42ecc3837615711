package qdranttest

import (
	"math"
	"sort"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultLimit is Qdrant's limit for a query or prefetch that sets none.
const defaultLimit = 10

// defaultRRFK is Qdrant's RRF constant when the request sets none
// (Fusion.RRF, or Rrf without k).
const defaultRRFK = 2

type scored struct {
	p     *point
	score float32
}

// sortScored orders by score, best first. Qdrant does not break ties; the
// fake breaks them by id so tests are deterministic.
func sortScored(s []scored) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return s[i].p.key < s[j].p.key
	})
}

func limitOr(l *uint64) int {
	if l == nil {
		return defaultLimit
	}
	return int(*l)
}

// stage is the part QueryPoints and PrefetchQuery share.
type stage struct {
	prefetch  []*pb.PrefetchQuery
	query     *pb.Query
	using     string
	filters   []*pb.Filter // the stage's own filter and every enclosing one
	threshold *float32
	limit     int
	offset    int
}

func (c *collection) query(req *pb.QueryPoints) ([]*pb.ScoredPoint, error) {
	// Search params (hnsw_ef, exact, quantization) only tune Qdrant's
	// approximate search; the fake is always exact.
	if req.LookupFrom != nil || req.ShardKeySelector != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: lookup_from and shard keys are not implemented")
	}
	var filters []*pb.Filter
	if req.Filter != nil {
		filters = append(filters, req.Filter)
	}
	res, err := c.eval(stage{
		prefetch: req.GetPrefetch(), query: req.GetQuery(), using: req.GetUsing(), filters: filters,
		threshold: req.ScoreThreshold, limit: limitOr(req.Limit), offset: int(req.GetOffset()),
	})
	if err != nil {
		return nil, err
	}
	out := make([]*pb.ScoredPoint, 0, len(res))
	for _, r := range res {
		out = append(out, &pb.ScoredPoint{Id: r.p.id, Score: r.score, Payload: selectPayload(req.GetWithPayload(), r.p.payload)})
	}
	return out, nil
}

// selectPayload applies with_payload; Qdrant's default for queries is none.
func selectPayload(sel *pb.WithPayloadSelector, payload map[string]*pb.Value) map[string]*pb.Value {
	switch s := sel.GetSelectorOptions().(type) {
	case *pb.WithPayloadSelector_Enable:
		if s.Enable {
			return payload
		}
	case *pb.WithPayloadSelector_Include:
		out := map[string]*pb.Value{}
		for _, f := range s.Include.GetFields() {
			if v, ok := payload[f]; ok {
				out[f] = v
			}
		}
		return out
	case *pb.WithPayloadSelector_Exclude:
		out := map[string]*pb.Value{}
		for k, v := range payload {
			out[k] = v
		}
		for _, f := range s.Exclude.GetFields() {
			delete(out, f)
		}
		return out
	}
	return nil
}

// eval runs one query stage. As in Qdrant, a stage's filter also applies to
// every prefetch below it, prefetches run first, and the stage's query then
// fuses or rescores their candidates.
func (c *collection) eval(st stage) ([]scored, error) {
	for _, f := range st.filters {
		if err := checkFilter(f); err != nil {
			return nil, err
		}
	}
	var res []scored
	var err error
	if len(st.prefetch) > 0 {
		lists := make([][]scored, 0, len(st.prefetch))
		for _, pf := range st.prefetch {
			if pf.LookupFrom != nil {
				return nil, status.Error(codes.Unimplemented, "qdranttest: lookup_from is not implemented")
			}
			filters := st.filters
			if pf.Filter != nil {
				filters = append(append([]*pb.Filter{}, st.filters...), pf.Filter)
			}
			l, err := c.eval(stage{prefetch: pf.GetPrefetch(), query: pf.GetQuery(), using: pf.GetUsing(),
				filters: filters, threshold: pf.ScoreThreshold, limit: limitOr(pf.Limit)})
			if err != nil {
				return nil, err
			}
			lists = append(lists, l)
		}
		res, err = c.combine(st, lists)
	} else {
		res, err = c.nearest(st, nil)
	}
	if err != nil {
		return nil, err
	}
	if st.threshold != nil {
		kept := res[:0]
		for _, r := range res {
			if r.score >= *st.threshold {
				kept = append(kept, r)
			}
		}
		res = kept
	}
	if st.offset >= len(res) {
		return nil, nil
	}
	res = res[st.offset:]
	if st.limit < len(res) {
		res = res[:st.limit]
	}
	return res, nil
}

// combine applies a stage's query to its prefetches' results.
func (c *collection) combine(st stage, lists [][]scored) ([]scored, error) {
	switch q := st.query.GetVariant().(type) {
	case *pb.Query_Rrf:
		k := defaultRRFK
		if q.Rrf.K != nil {
			k = int(q.Rrf.GetK())
		}
		if k == 0 {
			return nil, invalid("RRF k must be positive")
		}
		w := q.Rrf.GetWeights()
		if len(w) > 0 && len(w) != len(lists) {
			return nil, invalid("Number of weights in RRF should match number of pre-fetches: got %d, expected %d", len(w), len(lists))
		}
		return rrf(lists, k, w), nil
	case *pb.Query_Fusion:
		if q.Fusion != pb.Fusion_RRF {
			return nil, status.Errorf(codes.Unimplemented, "qdranttest: fusion %v is not implemented", q.Fusion)
		}
		return rrf(lists, defaultRRFK, nil), nil
	case *pb.Query_Nearest:
		// Rescore the union of the prefetched candidates.
		cand := map[string]*point{}
		for _, l := range lists {
			for _, s := range l {
				cand[s.p.key] = s.p
			}
		}
		return c.nearest(st, cand)
	}
	return nil, status.Errorf(codes.Unimplemented, "qdranttest: query %T over prefetches is not implemented", st.query.GetVariant())
}

// rrf is Qdrant's reciprocal rank fusion (lib/segment/src/common/
// reciprocal_rank_fusion.rs): a point at 0-based position pos of a list with
// weight w scores 1/((pos+1)/w + k - 1), i.e. 1/(k+pos) unweighted, summed
// over the lists that hold it. Input scores are ignored.
func rrf(lists [][]scored, k int, weights []float32) []scored {
	acc := map[string]*scored{}
	var order []string
	for li, l := range lists {
		w := float32(1)
		if len(weights) > 0 {
			w = weights[li]
		}
		for pos, s := range l {
			var sc float32
			if w > 0 {
				sc = 1 / (float32(pos+1)/w + float32(k) - 1)
			}
			if a, ok := acc[s.p.key]; ok {
				a.score += sc
				continue
			}
			acc[s.p.key] = &scored{p: s.p, score: sc}
			order = append(order, s.p.key)
		}
	}
	out := make([]scored, 0, len(acc))
	for _, key := range order {
		out = append(out, *acc[key])
	}
	sortScored(out)
	return out
}

// nearest scores points (all of the collection, or cand) that pass the
// stage's filters against a nearest-neighbour query on st.using.
func (c *collection) nearest(st stage, cand map[string]*point) ([]scored, error) {
	nq, ok := st.query.GetVariant().(*pb.Query_Nearest)
	if !ok {
		if st.query == nil {
			return nil, status.Error(codes.Unimplemented, "qdranttest: queries without a query (ordering by id) are not implemented")
		}
		return nil, status.Errorf(codes.Unimplemented, "qdranttest: query %T is not implemented", st.query.GetVariant())
	}
	pool := cand
	if pool == nil {
		pool = c.points
	}
	var score func(p *point) (float32, bool)
	var err error
	switch in := nq.Nearest.GetVariant().(type) {
	case *pb.VectorInput_Dense:
		score, err = c.denseScore(st.using, in.Dense.GetData())
	case *pb.VectorInput_Sparse:
		score, err = c.sparseScore(st.using, in.Sparse.GetIndices(), in.Sparse.GetValues())
	default:
		return nil, status.Errorf(codes.Unimplemented, "qdranttest: nearest input %T is not implemented", nq.Nearest.GetVariant())
	}
	if err != nil {
		return nil, err
	}
	var out []scored
	for _, p := range pool {
		if !matchAll(st.filters, p) {
			continue
		}
		if s, ok := score(p); ok {
			out = append(out, scored{p: p, score: s})
		}
	}
	sortScored(out)
	return out, nil
}

// denseScore scores a point by the dot product of its vector using with q
// (normalised first for the cosine distance); a point without it is not
// scored.
func (c *collection) denseScore(using string, q []float32) (func(p *point) (float32, bool), error) {
	params, ok := c.dense[using]
	if !ok {
		return nil, invalid("Not existing vector name error: %s", using)
	}
	if uint64(len(q)) != params.GetSize() {
		return nil, invalid("Vector dimension error: expected dim: %d, got %d", params.GetSize(), len(q))
	}
	if params.GetDistance() == pb.Distance_Cosine {
		q = normalize(q)
	} else if params.GetDistance() != pb.Distance_Dot {
		return nil, status.Errorf(codes.Unimplemented, "qdranttest: distance %v is not implemented", params.GetDistance())
	}
	return func(p *point) (float32, bool) {
		v, ok := p.dense[using]
		if !ok {
			return 0, false
		}
		var dot float64
		for i := range v {
			dot += float64(v[i]) * float64(q[i])
		}
		return float32(dot), true
	}, nil
}

// sparseScore scores a point by the dot product of its sparse vector using
// with the query's weights (times the IDF with that modifier); a point
// sharing no term is not scored.
func (c *collection) sparseScore(using string, qi []uint32, qv []float32) (func(p *point) (float32, bool), error) {
	params, ok := c.sparse[using]
	if !ok {
		return nil, invalid("Not existing vector name error: %s", using)
	}
	if len(qi) != len(qv) {
		return nil, invalid("Sparse vector indices and values must have the same length: %d != %d", len(qi), len(qv))
	}
	weights := make(map[uint32]float64, len(qi))
	for i, idx := range qi {
		weights[idx] = float64(qv[i])
	}
	if params.GetModifier() == pb.Modifier_Idf {
		for idx, w := range c.idf(using, qi) {
			weights[idx] *= w
		}
	}
	return func(p *point) (float32, bool) {
		v, ok := p.sparse[using]
		if !ok {
			return 0, false
		}
		var dot float64
		hit := false
		for i, idx := range v.indices {
			if w, ok := weights[idx]; ok {
				dot += w * float64(v.values[i])
				hit = true
			}
		}
		// Qdrant's inverted index only yields points sharing a term.
		return float32(dot), hit
	}, nil
}

// idf is Qdrant's IDF modifier for the given terms, computed over the whole
// collection (not the query's filter): ln(1 + (N - n + 0.5)/(n + 0.5)) with
// N the points holding this sparse vector and n those holding the term.
func (c *collection) idf(name string, terms []uint32) map[uint32]float64 {
	df := make(map[uint32]int, len(terms))
	for _, t := range terms {
		df[t] = 0
	}
	total := 0
	for _, p := range c.points {
		v, ok := p.sparse[name]
		if !ok {
			continue
		}
		total++
		for _, idx := range v.indices {
			if _, want := df[idx]; want {
				df[idx]++
			}
		}
	}
	out := make(map[uint32]float64, len(df))
	for t, n := range df {
		N, nf := float64(total), float64(n)
		out[t] = math.Log(1 + (N-nf+0.5)/(nf+0.5))
	}
	return out
}
