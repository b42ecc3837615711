// Package qdrant is the rag.Index backend on Qdrant, through the official Go
// client over gRPC (port 6334).
//
// All turns live in one collection (default "__memory__"), scoped by payload:
// tenant_id (a tenant index), user_id, chat_id, agent. Each point has a named
// dense vector "dense" (cosine) and a named sparse vector "sparse" with
// Qdrant's IDF modifier. A hybrid query is one Query API call with a dense
// and a sparse prefetch fused by RRF.
//
// New never fails because Qdrant is unreachable: contextd still starts, and
// the collection is created (or checked) on the first call that reaches
// Qdrant, and checked again after an outage. Every call has a deadline
// (Config.Timeout) and every failure to talk to Qdrant wraps ErrUnavailable.
package qdrant

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Defaults.
const (
	DefaultAddr       = "localhost:6334"
	DefaultCollection = "__memory__"
	DefaultTimeout    = 5 * time.Second
	// UpsertBatch is how many points one Upsert request carries.
	UpsertBatch = 256
)

// Vector names in the collection.
const (
	DenseVector  = "dense"
	SparseVector = "sparse"
)

// Payload keys, as shown in the Qdrant dashboard.
const (
	KeyTenant    = "tenant_id"
	KeyUser      = "user_id"
	KeyChat      = "chat_id"
	KeyAgent     = "agent"
	KeySeq       = "seq"
	KeyRole      = "role"
	KeyContent   = "content"
	KeyCreatedAt = "created_at"
	KeySource    = "source"
	sourceValue  = "contextd"

	// Episodes share the namespace with kind "episode" (turns: "turn", or no
	// kind in points written before episodes existed), their range, dates
	// and the episode id in plain fields. ts / ts_end are the unix seconds a
	// point spans (a turn: its time twice), for since/until range filters.
	KeyKind      = "kind"
	KeyEpisodeID = "episode_id"
	KeyFromSeq   = "from_seq"
	KeyToSeq     = "to_seq"
	KeyStartedAt = "started_at"
	KeyEndedAt   = "ended_at"
	KeyTS        = "ts"
	KeyTSEnd     = "ts_end"

	// Facts (kind "fact"): the fact id, its source seqs (an integer array,
	// so "seqs" matches any of them), valid_at (RFC 3339; also ts/ts_end)
	// and superseded (bool). seq is the fact's first source seq.
	KeyFactID     = "fact_id"
	KeySeqs       = "seqs"
	KeyValidAt    = "valid_at"
	KeySuperseded = "superseded"

	// Turns: passage (0 for a whole turn or a long turn's first passage),
	// its byte offsets [passage_from, passage_to) into the turn's content
	// and the turn's length in bytes. Points written before passages have
	// none of them: they hold the whole turn.
	KeyPassage     = "passage"
	KeyPassageFrom = "passage_from"
	KeyPassageTo   = "passage_to"
	KeyTurnBytes   = "turn_bytes"
)

// qdrantRRFK is the k sent to Qdrant. Qdrant scores a point at 0-based
// position pos as 1/(k+pos); rag.Hit defines the score as 1/(RRFK+rank) with
// rank starting at 1, so Qdrant needs k = RRFK+1 to give the same numbers.
const qdrantRRFK = rag.RRFK + 1

var (
	// ErrUnavailable wraps every failure to reach or be answered by Qdrant
	// (down, hanging past the deadline, refusing the request): callers
	// report it as vector_store_unavailable. It is a rag.ErrIndexUnavailable.
	ErrUnavailable = fmt.Errorf("%w", rag.ErrIndexUnavailable)
	// ErrIncompatibleCollection: the collection exists but lacks the named
	// vectors contextd needs (e.g. it was created by another application).
	ErrIncompatibleCollection = errors.New("qdrant collection incompatible with contextd")
	// ErrInvalid: the call itself is wrong (no tenant, wrong vector size).
	ErrInvalid = errors.New("invalid vector index request")
)

// Config configures an Index.
type Config struct {
	Addr    string // host:port of the gRPC API; default localhost:6334
	APIKey  string
	TLS     bool
	Timeout time.Duration // per call; default 5s
	// Collection defaults to "__memory__".
	Collection string
	// Dim is the dense vector size (the embedder's); required.
	Dim int
	// DialOptions are appended to the client's (tests: custom dialers).
	DialOptions []grpc.DialOption
	// OnCollectionCreated, if set, is called after this Index created the
	// collection: on first use against an empty Qdrant, or after Qdrant
	// came back without it (volume lost, collection dropped). The index is
	// then empty, so wire it to the store's Reset of every index kind
	// (memory.IndexKinds) to re-index every turn, episode and fact. It
	// runs on the calling goroutine: hand slow work to another.
	OnCollectionCreated func(collection string)
}

// Index is a rag.Index on a Qdrant collection. Safe for concurrent use.
type Index struct {
	cfg    Config
	client *qc.Client

	ready atomic.Bool // collection known to exist with the right schema

	mu     sync.Mutex
	flight *flight // the collection setup under way, if any
}

// flight is one collection setup shared by every caller that needs it
// meanwhile, so a hanging Qdrant costs each caller one timeout, not one per
// caller queued ahead of it.
type flight struct {
	done chan struct{}
	err  error
}

var _ rag.Index = (*Index)(nil)

// New makes the client and, when Qdrant answers a short health check, sets
// up the collection. An unreachable Qdrant is not an error (the collection
// is set up on first use); a collection whose dense size differs from Dim
// is (rag.ErrDimensionMismatch), since no call could succeed.
func New(ctx context.Context, cfg Config) (*Index, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Collection == "" {
		cfg.Collection = DefaultCollection
	}
	if cfg.Dim <= 0 {
		return nil, fmt.Errorf("qdrant: %w: dense vector size (embedder dimensions) must be positive, got %d", ErrInvalid, cfg.Dim)
	}
	host, port, err := splitAddr(cfg.Addr)
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{
		// Notice a recovered Qdrant within seconds, not grpc's default of
		// up to two minutes of reconnect backoff.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 3 * time.Second},
			MinConnectTimeout: cfg.Timeout,
		}),
	}
	client, err := qc.NewClient(&qc.Config{
		Host: host, Port: port, APIKey: cfg.APIKey, UseTLS: cfg.TLS,
		SkipCompatibilityCheck: true, // it would block New on an unreachable server
		PoolSize:               1,    // one HTTP/2 connection multiplexes every call
		GrpcOptions:            append(opts, cfg.DialOptions...),
	})
	if err != nil {
		return nil, fmt.Errorf("qdrant: client for %s: %w", cfg.Addr, err)
	}
	x := &Index{cfg: cfg, client: client}

	hctx, cancel := context.WithTimeout(ctx, min(cfg.Timeout, 2*time.Second))
	defer cancel()
	if _, err := client.HealthCheck(hctx); err == nil {
		if err := x.ensure(ctx); errors.Is(err, rag.ErrDimensionMismatch) || errors.Is(err, ErrIncompatibleCollection) {
			_ = client.Close()
			return nil, err
		}
	}
	return x, nil
}

// splitAddr turns "host:port" (a scheme prefix tolerated) into the
// client's host and port.
func splitAddr(addr string) (string, int, error) {
	a := addr
	for _, scheme := range []string{"http://", "https://", "grpc://"} {
		a = strings.TrimPrefix(a, scheme)
	}
	a = strings.TrimSuffix(a, "/")
	host, portStr, err := net.SplitHostPort(a)
	if err != nil {
		return "", 0, fmt.Errorf("qdrant: address %q: want host:port of the gRPC API (port 6334): %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("qdrant: address %q: bad port %q", addr, portStr)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // the client joins host and port with a bare colon
	}
	return host, port, nil
}

// Collection is the collection's name.
func (x *Index) Collection() string { return x.cfg.Collection }

// Close releases the connection.
func (x *Index) Close() error { return x.client.Close() }

// Ping checks Qdrant answers within the timeout and that the collection is
// set up (creating it if needed), so readiness reflects a usable index.
func (x *Index) Ping(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	if _, err := x.client.HealthCheck(cctx); err != nil {
		x.ready.Store(false)
		return x.wrap("health check", err)
	}
	return x.ensure(ctx)
}

// PointID is the deterministic point id of a turn (of its first passage),
// so re-indexing a turn overwrites it.
func PointID(tenant, chatID string, seq int64) string {
	return uuid.NewSHA1(pointNamespace, []byte(tenant+"\x00"+chatID+"\x00"+strconv.FormatInt(seq, 10))).String()
}

// PassagePointID is the id of a turn's passage: PointID for passage 0.
func PassagePointID(tenant, chatID string, seq int64, passage int) string {
	if passage == 0 {
		return PointID(tenant, chatID, seq)
	}
	return uuid.NewSHA1(pointNamespace, []byte(tenant+"\x00"+chatID+"\x00passage\x00"+
		strconv.FormatInt(seq, 10)+"\x00"+strconv.Itoa(passage))).String()
}

// FactPointID is the id of a fact's point.
func FactPointID(tenant, chatID, factID string) string {
	return uuid.NewSHA1(pointNamespace, []byte(tenant+"\x00"+chatID+"\x00fact\x00"+factID)).String()
}

// EpisodePointID is the id of the episode that starts at seq: distinct from
// the turn at that seq.
func EpisodePointID(tenant, chatID string, fromSeq int64) string {
	return uuid.NewSHA1(pointNamespace, []byte(tenant+"\x00"+chatID+"\x00episode\x00"+strconv.FormatInt(fromSeq, 10))).String()
}

// pointNamespace is fixed forever: changing it would duplicate every point.
var pointNamespace = uuid.MustParse("b7e0c3c4-5a0f-4c59-9a55-2f3d7b0e6a11")

// wrap marks an error from a Qdrant call as ErrUnavailable, keeping the
// gRPC status for errors.Is/As and logs.
func (x *Index) wrap(op string, err error) error {
	return fmt.Errorf("qdrant %s (%s, collection %q): %w: %w", op, x.cfg.Addr, x.cfg.Collection, ErrUnavailable, err)
}

// do runs one Qdrant call with the per-call deadline, after making sure the
// collection is set up. A call that finds the collection gone (Qdrant lost
// its volume, someone dropped it) sets it up again and retries once.
func (x *Index) do(ctx context.Context, op string, call func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		if err := x.ensure(ctx); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
		err := call(cctx)
		cancel()
		if err == nil {
			return nil
		}
		switch status.Code(err) {
		case codes.NotFound:
			x.ready.Store(false)
			if attempt == 0 {
				continue
			}
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
			// Re-check the collection once Qdrant is back: it may have
			// come back empty.
			x.ready.Store(false)
		}
		return x.wrap(op, err)
	}
}

// ensure creates the collection and its payload indexes if missing and
// checks the schema of an existing one. Cheap once done.
func (x *Index) ensure(ctx context.Context) error {
	if x.ready.Load() {
		return nil
	}
	x.mu.Lock()
	f := x.flight
	leader := f == nil
	if leader {
		f = &flight{done: make(chan struct{})}
		x.flight = f
	}
	x.mu.Unlock()
	if !leader {
		select {
		case <-f.done:
			return f.err
		case <-ctx.Done():
			return x.wrap("collection setup", ctx.Err())
		}
	}
	created, err := x.setUp(ctx)
	if err == nil {
		x.ready.Store(true)
	}
	f.err = err
	x.mu.Lock()
	x.flight = nil
	x.mu.Unlock()
	close(f.done)
	if created && x.cfg.OnCollectionCreated != nil {
		x.cfg.OnCollectionCreated(x.cfg.Collection)
	}
	return err
}

// setUp does the work of ensure; created reports that it made the
// collection.
func (x *Index) setUp(ctx context.Context) (created bool, err error) {
	call := func(op string, fn func(ctx context.Context) error) error {
		cctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
		defer cancel()
		if err := fn(cctx); err != nil {
			return x.wrap(op, err)
		}
		return nil
	}
	name := x.cfg.Collection
	var exists bool
	err = call("collection exists", func(ctx context.Context) (err error) {
		exists, err = x.client.CollectionExists(ctx, name)
		return err
	})
	if err != nil {
		return false, err
	}
	if !exists {
		err := call("create collection", func(ctx context.Context) error {
			err := x.client.CreateCollection(ctx, x.createRequest())
			if status.Code(err) == codes.AlreadyExists {
				return nil // another contextd replica won the race
			}
			created = err == nil
			return err
		})
		if err != nil {
			return false, err
		}
	}
	var info *qc.CollectionInfo
	err = call("get collection", func(ctx context.Context) (err error) {
		info, err = x.client.GetCollectionInfo(ctx, name)
		return err
	})
	if err != nil {
		return created, err
	}
	if err := x.checkSchema(info); err != nil {
		return created, err
	}
	for _, ix := range payloadIndexes() {
		if _, ok := info.GetPayloadSchema()[ix.GetFieldName()]; ok {
			continue
		}
		ix.CollectionName = name
		err := call("create payload index "+ix.GetFieldName(), func(ctx context.Context) error {
			_, err := x.client.CreateFieldIndex(ctx, ix)
			return err
		})
		if err != nil {
			return created, err
		}
	}
	return created, nil
}

func (x *Index) createRequest() *qc.CreateCollection {
	idf := qc.Modifier_Idf
	return &qc.CreateCollection{
		CollectionName: x.cfg.Collection,
		VectorsConfig: qc.NewVectorsConfigMap(map[string]*qc.VectorParams{
			DenseVector: {Size: uint64(x.cfg.Dim), Distance: qc.Distance_Cosine},
		}),
		SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{
			SparseVector: {Modifier: &idf},
		}),
	}
}

// payloadIndexes are the indexes every filter uses; tenant_id is a tenant
// index, so Qdrant co-locates each tenant's points.
func payloadIndexes() []*qc.CreateFieldIndexCollection {
	wait := true
	kw := func(field string, tenant bool) *qc.CreateFieldIndexCollection {
		p := &qc.KeywordIndexParams{}
		if tenant {
			p.IsTenant = &tenant
		}
		return &qc.CreateFieldIndexCollection{
			Wait: &wait, FieldName: field, FieldType: qc.FieldType_FieldTypeKeyword.Enum(),
			FieldIndexParams: qc.NewPayloadIndexParamsKeyword(p),
		}
	}
	lookup, rng := true, true
	integer := func(field string) *qc.CreateFieldIndexCollection {
		return &qc.CreateFieldIndexCollection{
			Wait: &wait, FieldName: field, FieldType: qc.FieldType_FieldTypeInteger.Enum(),
			FieldIndexParams: qc.NewPayloadIndexParamsInt(&qc.IntegerIndexParams{Lookup: &lookup, Range: &rng}),
		}
	}
	return []*qc.CreateFieldIndexCollection{
		kw(KeyTenant, true), kw(KeyUser, false), kw(KeyChat, false), kw(KeyAgent, false), kw(KeyKind, false),
		kw(KeyEpisodeID, false), kw(KeyFactID, false),
		integer(KeySeq), integer(KeyTS), integer(KeyTSEnd), integer(KeySeqs),
	}
}

func (x *Index) checkSchema(info *qc.CollectionInfo) error {
	params := info.GetConfig().GetParams()
	dense, ok := params.GetVectorsConfig().GetParamsMap().GetMap()[DenseVector]
	if !ok {
		return fmt.Errorf("qdrant collection %q has no named dense vector %q: %w; point vector.qdrant at another collection (namespace) or delete this one",
			x.cfg.Collection, DenseVector, ErrIncompatibleCollection)
	}
	if int(dense.GetSize()) != x.cfg.Dim {
		return fmt.Errorf("%w: qdrant collection %q stores %d-dimensional vectors but the embedder produces %d; "+
			"use the embedder the collection was built with, or delete the collection so contextd recreates it at the new size",
			rag.ErrDimensionMismatch, x.cfg.Collection, dense.GetSize(), x.cfg.Dim)
	}
	if _, ok := params.GetSparseVectorsConfig().GetMap()[SparseVector]; !ok {
		return fmt.Errorf("qdrant collection %q has no named sparse vector %q: %w; point vector.qdrant at another collection (namespace) or delete this one",
			x.cfg.Collection, SparseVector, ErrIncompatibleCollection)
	}
	return nil
}

// filter maps a rag.Filter to Qdrant's; Tenant is required.
func filter(f rag.Filter) (*qc.Filter, error) {
	if f.Tenant == "" {
		return nil, fmt.Errorf("qdrant: %w: filter without a tenant", ErrInvalid)
	}
	must := []*qc.Condition{qc.NewMatchKeyword(KeyTenant, f.Tenant)}
	if f.UserID != "" {
		must = append(must, qc.NewMatchKeyword(KeyUser, f.UserID))
	}
	switch len(f.ChatIDs) {
	case 0:
	case 1:
		must = append(must, qc.NewMatchKeyword(KeyChat, f.ChatIDs[0]))
	default:
		must = append(must, qc.NewMatchKeywords(KeyChat, f.ChatIDs...)) // any of
	}
	if f.Agent != "" {
		must = append(must, qc.NewMatchKeyword(KeyAgent, f.Agent))
	}
	kinds, mustNot, err := kindConditions(f.Kinds)
	if err != nil {
		return nil, err
	}
	must = append(must, kinds...)
	if f.CitingSeq > 0 {
		must = append(must, qc.NewMatchInt(KeySeqs, f.CitingSeq)) // only facts have seqs
	}
	if len(f.ItemIDs) > 0 {
		must = append(must, qc.NewFilterAsCondition(&qc.Filter{Should: []*qc.Condition{
			qc.NewMatchKeywords(KeyEpisodeID, f.ItemIDs...), qc.NewMatchKeywords(KeyFactID, f.ItemIDs...),
		}}))
	}
	if f.FromSeq > 0 || f.ToSeq > 0 {
		r := &qc.Range{}
		if f.FromSeq > 0 {
			r.Gte = ptr(float64(f.FromSeq))
		}
		if f.ToSeq > 0 {
			r.Lte = ptr(float64(f.ToSeq))
		}
		must = append(must, qc.NewRange(KeySeq, r))
	}
	// A point spans [ts, ts_end]: it matches when that overlaps [since, until].
	if !f.Since.IsZero() {
		must = append(must, qc.NewRange(KeyTSEnd, &qc.Range{Gte: ptr(float64(f.Since.Unix()))}))
	}
	if !f.Until.IsZero() {
		must = append(must, qc.NewRange(KeyTS, &qc.Range{Lte: ptr(float64(f.Until.Unix()))}))
	}
	return &qc.Filter{Must: must, MustNot: mustNot}, nil
}

// kindConditions maps kinds to conditions: turns written before episodes
// have no kind, so turns are selected by excluding the other kinds.
func kindConditions(kinds []string) (must, mustNot []*qc.Condition, err error) {
	if len(kinds) == 0 {
		return nil, nil, nil
	}
	want := map[string]bool{}
	for _, k := range kinds {
		if k == "" {
			k = memory.KindTurn
		}
		want[k] = true
	}
	var others, named []string
	for _, k := range []string{memory.KindEpisode, memory.KindFact} {
		if want[k] {
			named = append(named, k)
		} else {
			others = append(others, k)
		}
	}
	switch {
	case want[memory.KindTurn] && len(others) == 0:
		return nil, nil, nil
	case want[memory.KindTurn]:
		return nil, []*qc.Condition{qc.NewMatchKeywords(KeyKind, others...)}, nil
	case len(named) == 0:
		return nil, nil, fmt.Errorf("qdrant: %w: kinds %v name no known kind", ErrInvalid, kinds)
	}
	return []*qc.Condition{qc.NewMatchKeywords(KeyKind, named...)}, nil, nil
}

func ptr[T any](v T) *T { return &v }

// Upsert writes points in batches, waiting until each is applied.
func (x *Index) Upsert(ctx context.Context, points []rag.Point) error {
	structs := make([]*qc.PointStruct, 0, len(points))
	for i, p := range points {
		if p.Tenant == "" {
			return fmt.Errorf("qdrant: %w: point %d (chat %q seq %d) has no tenant", ErrInvalid, i, p.ChatID, p.Seq)
		}
		if len(p.Dense) != x.cfg.Dim {
			return fmt.Errorf("qdrant: %w: point %d has a %d-dimensional vector, the collection %q holds %d",
				rag.ErrDimensionMismatch, i, len(p.Dense), x.cfg.Collection, x.cfg.Dim)
		}
		structs = append(structs, toStruct(p))
	}
	wait := true
	for start := 0; start < len(structs); start += UpsertBatch {
		batch := structs[start:min(start+UpsertBatch, len(structs))]
		err := x.do(ctx, "upsert", func(ctx context.Context) error {
			_, err := x.client.Upsert(ctx, &qc.UpsertPoints{CollectionName: x.cfg.Collection, Wait: &wait, Points: batch})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func toStruct(p rag.Point) *qc.PointStruct {
	vectors := map[string]*qc.Vector{DenseVector: qc.NewVectorDense(p.Dense)}
	// A turn with no terms (all stopwords) simply has no sparse vector.
	if len(p.Sparse.Indices) > 0 {
		vectors[SparseVector] = qc.NewVectorSparse(p.Sparse.Indices, p.Sparse.Values)
	}
	pl := map[string]*qc.Value{
		KeyTenant:    qc.NewValueString(p.Tenant),
		KeyUser:      qc.NewValueString(p.UserID),
		KeyChat:      qc.NewValueString(p.ChatID),
		KeyAgent:     qc.NewValueString(p.Agent),
		KeySeq:       qc.NewValueInt(p.Seq),
		KeyRole:      qc.NewValueString(p.Role),
		KeyContent:   qc.NewValueString(p.Content),
		KeyCreatedAt: qc.NewValueString(p.CreatedAt.UTC().Format(time.RFC3339Nano)),
		KeySource:    qc.NewValueString(sourceValue),
		KeyKind:      qc.NewValueString(memory.KindTurn),
	}
	id := PassagePointID(p.Tenant, p.ChatID, p.Seq, p.Passage)
	start, end := p.CreatedAt, p.CreatedAt
	switch p.Kind {
	case memory.KindEpisode:
		id, start, end = EpisodePointID(p.Tenant, p.ChatID, p.Seq), p.StartedAt, p.EndedAt
		pl[KeyKind] = qc.NewValueString(memory.KindEpisode)
		pl[KeyEpisodeID] = qc.NewValueString(p.EpisodeID)
		pl[KeyFromSeq] = qc.NewValueInt(p.Seq)
		pl[KeyToSeq] = qc.NewValueInt(p.ToSeq)
		pl[KeyStartedAt] = qc.NewValueString(p.StartedAt.UTC().Format(time.RFC3339Nano))
		pl[KeyEndedAt] = qc.NewValueString(p.EndedAt.UTC().Format(time.RFC3339Nano))
	case memory.KindFact:
		valid := p.ValidAt
		if valid.IsZero() {
			valid = p.CreatedAt
		}
		id, start, end = FactPointID(p.Tenant, p.ChatID, p.FactID), valid, valid
		seqs := make([]*qc.Value, len(p.Seqs))
		for i, s := range p.Seqs {
			seqs[i] = qc.NewValueInt(s)
		}
		pl[KeyKind] = qc.NewValueString(memory.KindFact)
		pl[KeyFactID] = qc.NewValueString(p.FactID)
		pl[KeySeqs] = qc.NewValueFromList(seqs...)
		pl[KeyValidAt] = qc.NewValueString(valid.UTC().Format(time.RFC3339Nano))
		pl[KeySuperseded] = qc.NewValueBool(p.Superseded)
		pl[KeyCreatedAt] = pl[KeyValidAt]
	default:
		to, total := p.PassageTo, p.TurnBytes
		if to == 0 && p.PassageFrom == 0 {
			to = len(p.Content)
		}
		if total == 0 {
			total = to
		}
		pl[KeyPassage] = qc.NewValueInt(int64(p.Passage))
		pl[KeyPassageFrom] = qc.NewValueInt(int64(p.PassageFrom))
		pl[KeyPassageTo] = qc.NewValueInt(int64(to))
		pl[KeyTurnBytes] = qc.NewValueInt(int64(total))
	}
	if !start.IsZero() && !end.IsZero() {
		pl[KeyTS], pl[KeyTSEnd] = qc.NewValueInt(start.Unix()), qc.NewValueInt(end.Unix())
	}
	return &qc.PointStruct{Id: qc.NewIDUUID(id), Vectors: qc.NewVectorsMap(vectors), Payload: pl}
}

func fromPayload(pl map[string]*qc.Value) rag.Point {
	p := rag.Point{
		Tenant:  pl[KeyTenant].GetStringValue(),
		UserID:  pl[KeyUser].GetStringValue(),
		ChatID:  pl[KeyChat].GetStringValue(),
		Agent:   pl[KeyAgent].GetStringValue(),
		Seq:     pl[KeySeq].GetIntegerValue(),
		Role:    pl[KeyRole].GetStringValue(),
		Content: pl[KeyContent].GetStringValue(),
	}
	if t, err := time.Parse(time.RFC3339Nano, pl[KeyCreatedAt].GetStringValue()); err == nil {
		p.CreatedAt = t
	}
	switch pl[KeyKind].GetStringValue() {
	case memory.KindEpisode:
		p.Kind, p.EpisodeID = memory.KindEpisode, pl[KeyEpisodeID].GetStringValue()
		p.FromSeq, p.ToSeq = pl[KeyFromSeq].GetIntegerValue(), pl[KeyToSeq].GetIntegerValue()
		p.StartedAt, _ = time.Parse(time.RFC3339Nano, pl[KeyStartedAt].GetStringValue())
		p.EndedAt, _ = time.Parse(time.RFC3339Nano, pl[KeyEndedAt].GetStringValue())
	case memory.KindFact:
		p.Kind, p.FactID, p.Superseded = memory.KindFact, pl[KeyFactID].GetStringValue(), pl[KeySuperseded].GetBoolValue()
		for _, v := range pl[KeySeqs].GetListValue().GetValues() {
			p.Seqs = append(p.Seqs, v.GetIntegerValue())
		}
		p.ValidAt, _ = time.Parse(time.RFC3339Nano, pl[KeyValidAt].GetStringValue())
	default:
		p.Passage = int(pl[KeyPassage].GetIntegerValue())
		p.PassageFrom = int(pl[KeyPassageFrom].GetIntegerValue())
		p.PassageTo, p.TurnBytes = len(p.Content), len(p.Content) // points written before passages
		if v, ok := pl[KeyPassageTo]; ok {
			p.PassageTo = int(v.GetIntegerValue())
		}
		if v, ok := pl[KeyTurnBytes]; ok {
			p.TurnBytes = int(v.GetIntegerValue())
		}
	}
	return p
}

// Query runs the hybrid query: a dense prefetch (cosine, score threshold)
// and a sparse prefetch (IDF-weighted dot product), each up to Prefetch
// candidates, fused by RRF, in one Query API call. A second query in the same
// batch repeats the dense prefetch alone to report each hit's DenseScore
// (the fused result carries only the RRF score).
func (x *Index) Query(ctx context.Context, q rag.Query) ([]rag.Hit, error) {
	f, err := filter(q.Filter)
	if err != nil {
		return nil, err
	}
	hasDense, hasSparse := len(q.Dense) > 0, len(q.Sparse.Indices) > 0
	if hasDense && len(q.Dense) != x.cfg.Dim {
		return nil, fmt.Errorf("qdrant: %w: query vector has %d dimensions, the collection %q holds %d",
			rag.ErrDimensionMismatch, len(q.Dense), x.cfg.Collection, x.cfg.Dim)
	}
	if q.Limit <= 0 || (!hasDense && !hasSparse) {
		return nil, nil
	}
	batch, side := x.queryBatch(q, f)
	var res []*qc.BatchResult
	err = x.do(ctx, "query", func(ctx context.Context) (err error) {
		res, err = x.client.QueryBatch(ctx, &qc.QueryBatchPoints{CollectionName: x.cfg.Collection, QueryPoints: batch})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(res) != len(batch) {
		return nil, x.wrap("query", fmt.Errorf("got %d results for a batch of %d", len(res), len(batch)))
	}
	return fusedHits(res, side), nil
}

// queryBatch is a query's batch: first the fused query (each side a
// prefetch, fused by RRF), then each side again alone and without
// payloads, for the sides' own scores (rag.Hit); side says where each
// side's query is in the batch.
func (x *Index) queryBatch(q rag.Query, f *qc.Filter) ([]*qc.QueryPoints, map[string]int) {
	pf := uint64(q.Candidates())
	limit := uint64(q.Limit)
	var threshold *float32
	if q.ScoreThreshold > 0 {
		threshold = &q.ScoreThreshold
	}
	denseUsing, sparseUsing := DenseVector, SparseVector
	var sides []*qc.PrefetchQuery
	side := map[string]int{}
	if len(q.Dense) > 0 {
		side["dense"] = len(sides) + 1
		sides = append(sides, &qc.PrefetchQuery{
			Query: qc.NewQueryDense(q.Dense), Using: &denseUsing, Filter: f, Limit: &pf, ScoreThreshold: threshold,
		})
	}
	if len(q.Sparse.Indices) > 0 {
		side["sparse"] = len(sides) + 1
		sides = append(sides, &qc.PrefetchQuery{
			Query: qc.NewQuerySparse(q.Sparse.Indices, q.Sparse.Values), Using: &sparseUsing, Filter: f, Limit: &pf,
		})
	}
	k := uint32(qdrantRRFK)
	batch := []*qc.QueryPoints{{
		CollectionName: x.cfg.Collection,
		Prefetch:       sides,
		Query:          qc.NewQueryRRF(&qc.Rrf{K: &k}),
		Filter:         f,
		Limit:          &limit,
		WithPayload:    qc.NewWithPayload(true),
	}}
	for _, pq := range sides {
		batch = append(batch, &qc.QueryPoints{
			CollectionName: x.cfg.Collection, Query: pq.Query, Using: pq.Using, Filter: f, Limit: &pf,
			ScoreThreshold: pq.ScoreThreshold, WithPayload: qc.NewWithPayload(false),
		})
	}
	return batch, side
}

// fusedHits are the fused query's points, each with its sides' scores.
func fusedHits(res []*qc.BatchResult, side map[string]int) []rag.Hit {
	scores := func(name string) map[string]float32 {
		out := map[string]float32{}
		if i, ok := side[name]; ok {
			for _, sp := range res[i].GetResult() {
				out[sp.GetId().GetUuid()] = sp.GetScore()
			}
		}
		return out
	}
	dense, sparse := scores("dense"), scores("sparse")
	hits := make([]rag.Hit, 0, len(res[0].GetResult()))
	for _, sp := range res[0].GetResult() {
		id := sp.GetId().GetUuid()
		hits = append(hits, rag.Hit{
			Point:       fromPayload(sp.GetPayload()),
			Score:       sp.GetScore(),
			DenseScore:  dense[id],
			SparseScore: sparse[id],
		})
	}
	return hits
}

// Delete removes every point matching f and waits until it is applied.
func (x *Index) Delete(ctx context.Context, f rag.Filter) error {
	qf, err := filter(f)
	if err != nil {
		return err
	}
	wait := true
	return x.do(ctx, "delete", func(ctx context.Context) error {
		_, err := x.client.Delete(ctx, &qc.DeletePoints{
			CollectionName: x.cfg.Collection, Wait: &wait, Points: qc.NewPointsSelectorFilter(qf),
		})
		return err
	})
}

// Count counts the points matching f exactly.
func (x *Index) Count(ctx context.Context, f rag.Filter) (int, error) {
	qf, err := filter(f)
	if err != nil {
		return 0, err
	}
	exact := true
	var n uint64
	err = x.do(ctx, "count", func(ctx context.Context) (err error) {
		n, err = x.client.Count(ctx, &qc.CountPoints{CollectionName: x.cfg.Collection, Filter: qf, Exact: &exact})
		return err
	})
	return int(n), err
}
