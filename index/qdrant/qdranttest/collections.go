package qdranttest

import (
	"context"
	"sort"
	"time"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// collection is one Qdrant collection: its vector schema, payload indexes
// and points.
type collection struct {
	dense   map[string]*pb.VectorParams       // named dense vectors ("" = unnamed)
	sparse  map[string]*pb.SparseVectorParams // named sparse vectors
	indexes map[string]*pb.PayloadSchemaInfo
	points  map[string]*point
}

type point struct {
	key     string // canonical id: the uuid string or the number in decimal
	id      *pb.PointId
	payload map[string]*pb.Value
	dense   map[string][]float32
	sparse  map[string]sparseVec
}

type sparseVec struct {
	indices []uint32
	values  []float32
}

func (c *collection) info() *pb.CollectionInfo {
	vc := &pb.VectorsConfig{}
	if p, ok := c.dense[""]; ok && len(c.dense) == 1 {
		vc.Config = &pb.VectorsConfig_Params{Params: p}
	} else {
		vc.Config = &pb.VectorsConfig_ParamsMap{ParamsMap: &pb.VectorParamsMap{Map: c.dense}}
	}
	schema := map[string]*pb.PayloadSchemaInfo{}
	for k, v := range c.indexes {
		n := uint64(0)
		for _, p := range c.points {
			if _, ok := p.payload[k]; ok {
				n++
			}
		}
		schema[k] = &pb.PayloadSchemaInfo{DataType: v.DataType, Params: v.Params, Points: &n}
	}
	count := uint64(len(c.points))
	return &pb.CollectionInfo{
		Status:        pb.CollectionStatus_Green,
		SegmentsCount: 1,
		Config: &pb.CollectionConfig{Params: &pb.CollectionParams{
			ShardNumber:         1,
			VectorsConfig:       vc,
			SparseVectorsConfig: &pb.SparseVectorConfig{Map: c.sparse},
		}},
		PayloadSchema:       schema,
		PointsCount:         &count,
		IndexedVectorsCount: &count,
	}
}

func (c *collection) sortedPoints() []*point {
	ps := make([]*point, 0, len(c.points))
	for _, p := range c.points {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
	return ps
}

type collectionsService struct {
	pb.UnimplementedCollectionsServer
	s *Server
}

func (cs *collectionsService) CollectionExists(_ context.Context, req *pb.CollectionExistsRequest) (*pb.CollectionExistsResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	return &pb.CollectionExistsResponse{Result: &pb.CollectionExists{Exists: ok}}, nil
}

func (cs *collectionsService) Get(_ context.Context, req *pb.GetCollectionInfoRequest) (*pb.GetCollectionInfoResponse, error) {
	var info *pb.CollectionInfo
	err := cs.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		info = c.info()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &pb.GetCollectionInfoResponse{Result: info}, nil
}

func (cs *collectionsService) List(context.Context, *pb.ListCollectionsRequest) (*pb.ListCollectionsResponse, error) {
	resp := &pb.ListCollectionsResponse{}
	for _, n := range cs.s.Collections() {
		resp.Collections = append(resp.Collections, &pb.CollectionDescription{Name: n})
	}
	return resp, nil
}

func (cs *collectionsService) Create(_ context.Context, req *pb.CreateCollection) (*pb.CollectionOperationResponse, error) {
	start := time.Now()
	name := req.GetCollectionName()
	if name == "" {
		return nil, invalid("collection name must not be empty")
	}
	c := &collection{
		dense:   map[string]*pb.VectorParams{},
		sparse:  map[string]*pb.SparseVectorParams{},
		indexes: map[string]*pb.PayloadSchemaInfo{},
		points:  map[string]*point{},
	}
	switch v := req.GetVectorsConfig().GetConfig().(type) {
	case *pb.VectorsConfig_Params:
		c.dense[""] = v.Params
	case *pb.VectorsConfig_ParamsMap:
		for n, p := range v.ParamsMap.GetMap() {
			c.dense[n] = p
		}
	}
	for n, p := range c.dense {
		if p.GetSize() == 0 {
			return nil, invalid("vector %q: size must be positive", n)
		}
		if p.GetDistance() == pb.Distance_UnknownDistance {
			return nil, invalid("vector %q: distance is required", n)
		}
		if p.GetMultivectorConfig() != nil {
			return nil, status.Error(codes.Unimplemented, "qdranttest: multivectors are not implemented")
		}
	}
	for n, p := range req.GetSparseVectorsConfig().GetMap() {
		if _, dup := c.dense[n]; dup {
			return nil, invalid("vector name %q is used by both a dense and a sparse vector", n)
		}
		c.sparse[n] = p
	}
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	if _, ok := cs.s.collections[name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Wrong input: Collection `%s` already exists!", name)
	}
	cs.s.collections[name] = c
	return &pb.CollectionOperationResponse{Result: true, Time: time.Since(start).Seconds()}, nil
}

func (cs *collectionsService) Delete(_ context.Context, req *pb.DeleteCollection) (*pb.CollectionOperationResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	delete(cs.s.collections, req.GetCollectionName())
	// Qdrant answers result=false for a collection that did not exist.
	return &pb.CollectionOperationResponse{Result: ok}, nil
}
