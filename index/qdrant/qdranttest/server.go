// Package qdranttest is an in-process fake Qdrant gRPC server for tests. It
// is built on the go-client's own generated service interfaces and listens on
// real TCP, so an adapter is exercised over the wire exactly as against
// Qdrant. It implements, with Qdrant's semantics, the calls index/qdrant makes:
// health check, collection exists/get/create/delete, create field index,
// upsert, delete, count, query and query batch (prefetch + RRF fusion, dense
// cosine and sparse dot-product search with the IDF modifier, filters,
// score thresholds). Every other RPC answers codes.Unimplemented.
//
// Fault controls: Stop and Restart (same address; data survives like a
// Qdrant with a persistent volume), Wipe (the volume is lost), SetHang (calls
// are accepted but never answered before the caller's deadline), and
// per-method request counters.
package qdranttest

import (
	"context"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// Version is what the fake reports in its health check.
const Version = "1.17.0-fake"

// Server is a running fake. All methods are safe for concurrent use.
type Server struct {
	addr string
	hang atomic.Bool

	runMu sync.Mutex // guards srv (start/stop)
	srv   *grpc.Server

	mu          sync.Mutex // guards the data and the counters
	collections map[string]*collection
	calls       map[string]int
}

// Start runs a fake on 127.0.0.1 with an OS-chosen port and stops it when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("qdranttest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Listen runs a fake on addr (host:port; port 0 picks one). Call Stop when
// done.
func Listen(addr string) (*Server, error) {
	s := &Server{collections: map[string]*collection{}, calls: map[string]int{}}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.addr = lis.Addr().String()
	s.serve(lis)
	return s, nil
}

// Addr is the host:port the fake listens on (stable across Restart).
func (s *Server) Addr() string { return s.addr }

func (s *Server) serve(lis net.Listener) {
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(s.intercept),
		// The go-client pings every 10s; grpc-go's default policy (5 min)
		// would answer that with GOAWAY, Qdrant does not.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
	)
	pb.RegisterQdrantServer(srv, &qdrantService{s: s})
	pb.RegisterCollectionsServer(srv, &collectionsService{s: s})
	pb.RegisterPointsServer(srv, &pointsService{s: s})
	s.runMu.Lock()
	s.srv = srv
	s.runMu.Unlock()
	go func() { _ = srv.Serve(lis) }()
}

// Stop closes the listener and every connection, failing in-flight calls
// (an outage). Data is kept for Restart. Stopping twice is a no-op.
func (s *Server) Stop() {
	s.runMu.Lock()
	srv := s.srv
	s.srv = nil
	s.runMu.Unlock()
	if srv != nil {
		srv.Stop()
	}
}

// Restart stops the fake if it runs and serves again on the same address.
func (s *Server) Restart() error {
	s.Stop()
	var lis net.Listener
	var err error
	// The old socket may linger for a moment after close.
	for i := 0; i < 50; i++ {
		if lis, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	s.serve(lis)
	return nil
}

// Wipe drops every collection, like a Qdrant restarted without its volume.
func (s *Server) Wipe() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collections = map[string]*collection{}
}

// SetHang makes every call block until the caller's deadline (or Stop)
// instead of answering.
func (s *Server) SetHang(on bool) { s.hang.Store(on) }

// Calls reports how many requests a method received, named
// "Service/Method", e.g. "Points/Query", "Collections/Create",
// "Qdrant/HealthCheck". Requests that hung or failed count too.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// ResetCalls zeroes the request counters.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

// CollectionInfo returns what the Get RPC would answer for name.
func (s *Server) CollectionInfo(name string) (*pb.CollectionInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[name]
	if !ok {
		return nil, false
	}
	return c.info(), true
}

// Collections lists the collection names, sorted.
func (s *Server) Collections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.collections))
	for n := range s.collections {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StoredPoint is a point as the fake holds it (dense vectors normalized, as
// Qdrant stores cosine vectors).
type StoredPoint struct {
	ID      string
	Payload map[string]*pb.Value
	Dense   map[string][]float32
	Sparse  map[string]*pb.SparseVector
}

// Points returns a collection's points ordered by id.
func (s *Server) Points(collection string) []StoredPoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[collection]
	if !ok {
		return nil
	}
	out := make([]StoredPoint, 0, len(c.points))
	for _, p := range c.sortedPoints() {
		sp := StoredPoint{ID: p.key, Payload: p.payload, Dense: p.dense, Sparse: map[string]*pb.SparseVector{}}
		for n, v := range p.sparse {
			sp.Sparse[n] = &pb.SparseVector{Indices: v.indices, Values: v.values}
		}
		out = append(out, sp)
	}
	return out
}

// intercept counts every call and implements SetHang.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	name := strings.TrimPrefix(info.FullMethod, "/qdrant.")
	s.mu.Lock()
	s.calls[name]++
	s.mu.Unlock()
	if s.hang.Load() {
		<-ctx.Done() // the caller's deadline, or Stop closing the connection
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return handler(ctx, req)
}

// withCollection runs fn on the named collection under the lock, answering
// NotFound like Qdrant when it does not exist.
func (s *Server) withCollection(name string, fn func(c *collection) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.collections[name]
	if !ok {
		return notFound(name)
	}
	return fn(c)
}

func notFound(name string) error {
	return status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "Wrong input: "+format, args...)
}

type qdrantService struct {
	pb.UnimplementedQdrantServer
	s *Server
}

func (q *qdrantService) HealthCheck(context.Context, *pb.HealthCheckRequest) (*pb.HealthCheckReply, error) {
	return &pb.HealthCheckReply{Title: "qdrant - vector search engine (qdranttest fake)", Version: Version}, nil
}
