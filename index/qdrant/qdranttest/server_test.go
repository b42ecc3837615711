package qdranttest

import (
	"context"
	"math"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func client(t *testing.T, s *Server) *pb.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.Addr())
	p, _ := strconv.Atoi(port)
	c, err := pb.NewClient(&pb.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustCreate(t *testing.T, c *pb.Client, name string) {
	t.Helper()
	idf := pb.Modifier_Idf
	if err := c.CreateCollection(ctx(t), &pb.CreateCollection{
		CollectionName:      name,
		VectorsConfig:       pb.NewVectorsConfigMap(map[string]*pb.VectorParams{"d": {Size: 2, Distance: pb.Distance_Cosine}}),
		SparseVectorsConfig: pb.NewSparseVectorsConfig(map[string]*pb.SparseVectorParams{"s": {Modifier: &idf}, "raw": {}}),
	}); err != nil {
		t.Fatal(err)
	}
}

type tp struct {
	id      uint64
	dense   []float32
	sparse  map[uint32]float32
	payload map[string]any
}

func mustUpsert(t *testing.T, c *pb.Client, name string, pts ...tp) {
	t.Helper()
	var in []*pb.PointStruct
	for _, p := range pts {
		vs := map[string]*pb.Vector{}
		if p.dense != nil {
			vs["d"] = pb.NewVectorDense(p.dense)
		}
		if p.sparse != nil {
			var idx []uint32
			var val []float32
			for i, v := range p.sparse {
				idx = append(idx, i)
				val = append(val, v)
			}
			vs["s"] = pb.NewVectorSparse(idx, val)
			vs["raw"] = pb.NewVectorSparse(idx, val)
		}
		in = append(in, &pb.PointStruct{Id: pb.NewIDNum(p.id), Vectors: pb.NewVectorsMap(vs), Payload: pb.NewValueMap(p.payload)})
	}
	wait := true
	if _, err := c.Upsert(ctx(t), &pb.UpsertPoints{CollectionName: name, Wait: &wait, Points: in}); err != nil {
		t.Fatal(err)
	}
}

func ids(sp []*pb.ScoredPoint) []uint64 {
	out := make([]uint64, len(sp))
	for i, p := range sp {
		out[i] = p.GetId().GetNum()
	}
	return out
}

func eq(a, b []uint64) bool { return slices.Equal(a, b) }

// TestRRFMatchesQdrant replays the expectations of Qdrant's own unit tests
// (lib/segment/src/common/reciprocal_rank_fusion.rs).
func TestRRFMatchesQdrant(t *testing.T) {
	mk := func(ids ...string) []scored {
		out := make([]scored, len(ids))
		for i, id := range ids {
			out[i] = scored{p: &point{key: id}}
		}
		return out
	}
	got := rrf([][]scored{mk("2", "1"), mk("1", "2", "3"), mk("5", "3", "1")}, defaultRRFK, nil)
	want := []struct {
		id    string
		score float32
	}{{"1", 1.0833334}, {"2", 0.8333334}, {"3", 0.5833334}, {"5", 0.5}}
	if len(got) != len(want) {
		t.Fatalf("got %d points", len(got))
	}
	for i, w := range want {
		if got[i].p.key != w.id || math.Abs(float64(got[i].score-w.score)) > 1e-6 {
			t.Errorf("rank %d = %s %v, want %s %v", i, got[i].p.key, got[i].score, w.id, w.score)
		}
	}
	// Weighted: a 3:1 weight puts point 2 (2nd in the heavy list, 1st in the
	// light one) ahead; a zero weight contributes nothing.
	w := rrf([][]scored{mk("1", "2"), mk("2", "1")}, defaultRRFK, []float32{3, 1})
	if w[0].p.key != "2" || !(w[0].score > w[1].score) {
		t.Errorf("weighted RRF = %+v", w)
	}
	z := rrf([][]scored{mk("1"), mk("2")}, defaultRRFK, []float32{1, 0})
	if z[0].p.key != "1" || z[0].score != 0.5 || z[1].score != 0 {
		t.Errorf("zero weight RRF = %+v", z)
	}
}

func TestQueryOverTheWire(t *testing.T) {
	s := Start(t)
	c := client(t, s)
	mustCreate(t, c, "col")
	mustUpsert(t, c, "col",
		tp{1, []float32{1, 0}, map[uint32]float32{1: 1}, map[string]any{"tenant": "a", "n": 1}},
		tp{2, []float32{0.6, 0.8}, map[uint32]float32{1: 1, 2: 2}, map[string]any{"tenant": "a", "n": 2}},
		tp{3, []float32{0, 1}, map[uint32]float32{3: 1}, map[string]any{"tenant": "b", "n": 3}},
	)
	d, sp := "d", "s"
	lim := func(n uint64) *uint64 { return &n }
	thr := float32(0.5)

	// Dense, cosine (the stored vector is normalized), with a threshold.
	res, err := c.Query(ctx(t), &pb.QueryPoints{CollectionName: "col", Query: pb.NewQueryDense([]float32{2, 0}), Using: &d, ScoreThreshold: &thr})
	if err != nil {
		t.Fatal(err)
	}
	if !eq(ids(res), []uint64{1, 2}) || math.Abs(float64(res[1].GetScore())-0.6) > 1e-6 {
		t.Errorf("dense query = %v %v", ids(res), res)
	}
	if res[0].GetPayload() != nil {
		t.Errorf("payload returned without with_payload")
	}

	// Sparse with IDF: N=3, term 1 in 2 points, term 2 in 1.
	res, err = c.Query(ctx(t), &pb.QueryPoints{CollectionName: "col", Query: pb.NewQuerySparse([]uint32{1, 2}, []float32{1, 1}), Using: &sp})
	if err != nil {
		t.Fatal(err)
	}
	idf1, idf2 := math.Log(1+(3-2+0.5)/(2+0.5)), math.Log(1+(3-1+0.5)/(1+0.5))
	if !eq(ids(res), []uint64{2, 1}) {
		t.Fatalf("sparse query = %v, want [2 1] (point 3 shares no term)", ids(res))
	}
	if math.Abs(float64(res[0].GetScore())-(idf1+2*idf2)) > 1e-5 || math.Abs(float64(res[1].GetScore())-idf1) > 1e-5 {
		t.Errorf("IDF scores = %v, %v; want %v, %v", res[0].GetScore(), res[1].GetScore(), idf1+2*idf2, idf1)
	}
	raw := "raw"
	res, _ = c.Query(ctx(t), &pb.QueryPoints{CollectionName: "col", Query: pb.NewQuerySparse([]uint32{1, 2}, []float32{1, 1}), Using: &raw})
	if len(res) != 2 || res[0].GetScore() != 3 || res[1].GetScore() != 1 {
		t.Errorf("sparse without modifier = %v", res)
	}

	// Filters: must, should (any), must_not, keywords any-of, range.
	for _, tc := range []struct {
		name string
		f    *pb.Filter
		want []uint64
	}{
		{"must", &pb.Filter{Must: []*pb.Condition{pb.NewMatchKeyword("tenant", "a")}}, []uint64{1, 2}},
		{"must_not", &pb.Filter{MustNot: []*pb.Condition{pb.NewMatchKeyword("tenant", "a")}}, []uint64{3}},
		{"should", &pb.Filter{Should: []*pb.Condition{pb.NewMatchInt("n", 1), pb.NewMatchInt("n", 3)}}, []uint64{1, 3}},
		{"any of", &pb.Filter{Must: []*pb.Condition{pb.NewMatchKeywords("tenant", "b", "c")}}, []uint64{3}},
		{"range", &pb.Filter{Must: []*pb.Condition{pb.NewRange("n", &pb.Range{Gte: pb.PtrOf(2.0)})}}, []uint64{2, 3}},
		{"missing key", &pb.Filter{Must: []*pb.Condition{pb.NewMatchKeyword("nope", "a")}}, []uint64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Query(ctx(t), &pb.QueryPoints{CollectionName: "col", Query: pb.NewQueryDense([]float32{1, 1}), Using: &d, Filter: tc.f})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(res)
			slices.Sort(got)
			if !eq(got, tc.want) {
				t.Errorf("filter %s = %v, want %v", tc.name, got, tc.want)
			}
			n, err := c.Count(ctx(t), &pb.CountPoints{CollectionName: "col", Filter: tc.f})
			if err != nil || int(n) != len(tc.want) {
				t.Errorf("count %s = %d, %v", tc.name, n, err)
			}
		})
	}

	// Prefetch + RRF; the outer filter reaches the prefetches.
	k := uint32(60)
	res, err = c.Query(ctx(t), &pb.QueryPoints{
		CollectionName: "col",
		Prefetch: []*pb.PrefetchQuery{
			{Query: pb.NewQueryDense([]float32{1, 0}), Using: &d, Limit: lim(10)},
			{Query: pb.NewQuerySparse([]uint32{2}, []float32{1}), Using: &sp, Limit: lim(10)},
		},
		Query:       pb.NewQueryRRF(&pb.Rrf{K: &k}),
		Filter:      &pb.Filter{Must: []*pb.Condition{pb.NewMatchKeyword("tenant", "a")}},
		WithPayload: pb.NewWithPayloadInclude("n"),
		Limit:       lim(5),
	})
	if err != nil {
		t.Fatal(err)
	}
	// dense: 1, 2 (3 filtered out); sparse: 2. Point 2: 1/61 + 1/60.
	if !eq(ids(res), []uint64{2, 1}) || math.Abs(float64(res[0].GetScore())-(1.0/61+1.0/60)) > 1e-6 || math.Abs(float64(res[1].GetScore())-1.0/60) > 1e-6 {
		t.Errorf("RRF = %v", res)
	}
	if p := res[0].GetPayload(); len(p) != 1 || p["n"].GetIntegerValue() != 2 {
		t.Errorf("payload include = %v", p)
	}
}

func TestErrorsLikeQdrant(t *testing.T) {
	s := Start(t)
	c := client(t, s)
	d := "d"
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"missing collection", func() error { _, err := c.GetCollectionInfo(ctx(t), "nope"); return err }, codes.NotFound},
		{"count missing", func() error { _, err := c.Count(ctx(t), &pb.CountPoints{CollectionName: "nope"}); return err }, codes.NotFound},
		{"create twice", func() error {
			mustCreate(t, c, "x")
			return c.CreateCollection(ctx(t), &pb.CreateCollection{CollectionName: "x"})
		}, codes.AlreadyExists},
		{"wrong dim", func() error {
			_, err := c.Upsert(ctx(t), &pb.UpsertPoints{CollectionName: "x", Points: []*pb.PointStruct{{Id: pb.NewIDNum(1), Vectors: pb.NewVectorsMap(map[string]*pb.Vector{"d": pb.NewVectorDense([]float32{1, 2, 3})})}}})
			return err
		}, codes.InvalidArgument},
		{"unknown vector", func() error {
			_, err := c.Upsert(ctx(t), &pb.UpsertPoints{CollectionName: "x", Points: []*pb.PointStruct{{Id: pb.NewIDNum(1), Vectors: pb.NewVectorsMap(map[string]*pb.Vector{"zz": pb.NewVectorDense([]float32{1, 2})})}}})
			return err
		}, codes.InvalidArgument},
		{"bad uuid", func() error {
			_, err := c.Upsert(ctx(t), &pb.UpsertPoints{CollectionName: "x", Points: []*pb.PointStruct{{Id: pb.NewIDUUID("not-a-uuid")}}})
			return err
		}, codes.InvalidArgument},
		{"query dim", func() error {
			_, err := c.Query(ctx(t), &pb.QueryPoints{CollectionName: "x", Query: pb.NewQueryDense([]float32{1}), Using: &d})
			return err
		}, codes.InvalidArgument},
		{"unimplemented rpc", func() error { _, err := c.Scroll(ctx(t), &pb.ScrollPoints{CollectionName: "x"}); return err }, codes.Unimplemented},
		{"unimplemented match", func() error {
			_, err := c.Count(ctx(t), &pb.CountPoints{CollectionName: "x", Filter: &pb.Filter{Must: []*pb.Condition{pb.NewMatchText("a", "b")}}})
			return err
		}, codes.Unimplemented},
	} {
		if got := status.Code(tc.call()); got != tc.code {
			t.Errorf("%s: code %v, want %v", tc.name, got, tc.code)
		}
	}
}

func TestFaultControls(t *testing.T) {
	s := Start(t)
	c := client(t, s)
	mustCreate(t, c, "col")
	mustUpsert(t, c, "col", tp{id: 7, dense: []float32{1, 0}})
	addr := s.Addr()

	s.Stop()
	if _, err := c.HealthCheck(ctx(t)); status.Code(err) != codes.Unavailable {
		t.Errorf("health check while stopped: %v", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != addr {
		t.Errorf("address changed: %s -> %s", addr, s.Addr())
	}
	// Data survives a restart; a fresh client connects at once.
	c2 := client(t, s)
	if n, err := c2.Count(ctx(t), &pb.CountPoints{CollectionName: "col"}); err != nil || n != 1 {
		t.Errorf("count after restart = %d, %v", n, err)
	}
	s.Wipe()
	if ok, err := c2.CollectionExists(ctx(t), "col"); err != nil || ok {
		t.Errorf("collection after wipe: %v, %v", ok, err)
	}

	s.SetHang(true)
	s.ResetCalls()
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c2.HealthCheck(short); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("hanging health check: %v", err)
	}
	if s.Calls("Qdrant/HealthCheck") != 1 {
		t.Errorf("hanging call not counted: %d", s.Calls("Qdrant/HealthCheck"))
	}
	s.SetHang(false)
	if _, err := c2.HealthCheck(ctx(t)); err != nil {
		t.Errorf("after hang: %v", err)
	}
}
