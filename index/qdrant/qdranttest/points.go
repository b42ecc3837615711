package qdranttest

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type pointsService struct {
	pb.UnimplementedPointsServer
	s *Server
}

func updated(wait bool, start time.Time) *pb.PointsOperationResponse {
	st := pb.UpdateStatus_Acknowledged
	if wait {
		st = pb.UpdateStatus_Completed
	}
	op := uint64(0)
	return &pb.PointsOperationResponse{Result: &pb.UpdateResult{OperationId: &op, Status: st}, Time: time.Since(start).Seconds()}
}

func (ps *pointsService) CreateFieldIndex(_ context.Context, req *pb.CreateFieldIndexCollection) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if req.GetFieldName() == "" {
		return nil, invalid("field name must not be empty")
	}
	dt, err := schemaType(req.GetFieldType())
	if err != nil {
		return nil, err
	}
	if p := req.GetFieldIndexParams(); p != nil {
		// Params must agree with the field type, as in Qdrant.
		ok := true
		switch p.GetIndexParams().(type) {
		case *pb.PayloadIndexParams_KeywordIndexParams:
			ok = dt == pb.PayloadSchemaType_Keyword
		case *pb.PayloadIndexParams_IntegerIndexParams:
			ok = dt == pb.PayloadSchemaType_Integer
		}
		if !ok {
			return nil, invalid("index params do not match field type %v", req.GetFieldType())
		}
	}
	err = ps.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		c.indexes[req.GetFieldName()] = &pb.PayloadSchemaInfo{DataType: dt, Params: req.GetFieldIndexParams()}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return updated(req.GetWait(), start), nil
}

func schemaType(ft pb.FieldType) (pb.PayloadSchemaType, error) {
	switch ft {
	case pb.FieldType_FieldTypeKeyword:
		return pb.PayloadSchemaType_Keyword, nil
	case pb.FieldType_FieldTypeInteger:
		return pb.PayloadSchemaType_Integer, nil
	case pb.FieldType_FieldTypeFloat:
		return pb.PayloadSchemaType_Float, nil
	case pb.FieldType_FieldTypeBool:
		return pb.PayloadSchemaType_Bool, nil
	case pb.FieldType_FieldTypeDatetime:
		return pb.PayloadSchemaType_Datetime, nil
	case pb.FieldType_FieldTypeUuid:
		return pb.PayloadSchemaType_Uuid, nil
	case pb.FieldType_FieldTypeText:
		return pb.PayloadSchemaType_Text, nil
	case pb.FieldType_FieldTypeGeo:
		return pb.PayloadSchemaType_Geo, nil
	}
	return 0, invalid("unknown field type %v", ft)
}

// pointKey canonicalizes an id like Qdrant: uuids in lowercase hyphenated
// form, numbers as themselves.
func pointKey(id *pb.PointId) (string, error) {
	switch v := id.GetPointIdOptions().(type) {
	case *pb.PointId_Num:
		return fmt.Sprintf("%d", v.Num), nil
	case *pb.PointId_Uuid:
		u, err := uuid.Parse(v.Uuid)
		if err != nil {
			return "", invalid("Unable to parse UUID: %s", v.Uuid)
		}
		return u.String(), nil
	}
	return "", invalid("point id is required")
}

func canonicalID(key string, id *pb.PointId) *pb.PointId {
	if _, ok := id.GetPointIdOptions().(*pb.PointId_Uuid); ok {
		return pb.NewIDUUID(key)
	}
	return id
}

// vectorData reads a *pb.Vector in either the current oneof form or the
// deprecated data/indices form.
func vectorData(v *pb.Vector) (dense []float32, sparse *sparseVec, err error) {
	switch x := v.GetVector().(type) {
	case *pb.Vector_Dense:
		return x.Dense.GetData(), nil, nil
	case *pb.Vector_Sparse:
		return nil, &sparseVec{indices: x.Sparse.GetIndices(), values: x.Sparse.GetValues()}, nil
	case nil:
		//nolint:staticcheck // the deprecated encoding is still valid on the wire
		if idx := v.GetIndices(); idx != nil {
			return nil, &sparseVec{indices: idx.GetData(), values: v.GetData()}, nil
		}
		return v.GetData(), nil, nil
	}
	return nil, nil, status.Error(codes.Unimplemented, "qdranttest: only dense and sparse vectors are implemented")
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 {
		copy(out, v)
		return out
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// setVector validates one named vector against the schema and stores it.
func (c *collection) setVector(p *point, name string, v *pb.Vector) error {
	dense, sparse, err := vectorData(v)
	if err != nil {
		return err
	}
	if sparse != nil {
		if _, ok := c.sparse[name]; !ok {
			return invalid("Not existing vector name error: %s", name)
		}
		if len(sparse.indices) != len(sparse.values) {
			return invalid("Sparse vector indices and values must have the same length: %d != %d", len(sparse.indices), len(sparse.values))
		}
		seen := make(map[uint32]bool, len(sparse.indices))
		for _, i := range sparse.indices {
			if seen[i] {
				return invalid("Sparse vector indices must be unique: %d is repeated", i)
			}
			seen[i] = true
		}
		p.sparse[name] = *sparse
		return nil
	}
	params, ok := c.dense[name]
	if !ok {
		return invalid("Not existing vector name error: %s", name)
	}
	if uint64(len(dense)) != params.GetSize() {
		return invalid("Vector dimension error: expected dim: %d, got %d", params.GetSize(), len(dense))
	}
	if params.GetDistance() == pb.Distance_Cosine {
		dense = normalize(dense)
	}
	p.dense[name] = dense
	return nil
}

func (ps *pointsService) Upsert(_ context.Context, req *pb.UpsertPoints) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if req.UpdateFilter != nil || req.UpdateMode != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: conditional upserts are not implemented")
	}
	err := ps.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		// Validate the whole batch first: Qdrant applies it or rejects it.
		batch := make([]*point, 0, len(req.GetPoints()))
		for _, in := range req.GetPoints() {
			key, err := pointKey(in.GetId())
			if err != nil {
				return err
			}
			p := &point{key: key, id: canonicalID(key, in.GetId()), payload: in.GetPayload(),
				dense: map[string][]float32{}, sparse: map[string]sparseVec{}}
			if p.payload == nil {
				p.payload = map[string]*pb.Value{}
			}
			switch v := in.GetVectors().GetVectorsOptions().(type) {
			case *pb.Vectors_Vector:
				if err := c.setVector(p, "", v.Vector); err != nil {
					return err
				}
			case *pb.Vectors_Vectors:
				for name, vec := range v.Vectors.GetVectors() {
					if err := c.setVector(p, name, vec); err != nil {
						return err
					}
				}
			}
			batch = append(batch, p)
		}
		for _, p := range batch {
			c.points[p.key] = p // upsert overwrites the whole point
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return updated(req.GetWait(), start), nil
}

func (ps *pointsService) Delete(_ context.Context, req *pb.DeletePoints) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	err := ps.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		switch sel := req.GetPoints().GetPointsSelectorOneOf().(type) {
		case *pb.PointsSelector_Points:
			for _, id := range sel.Points.GetIds() {
				key, err := pointKey(id)
				if err != nil {
					return err
				}
				delete(c.points, key)
			}
		case *pb.PointsSelector_Filter:
			if err := checkFilter(sel.Filter); err != nil {
				return err
			}
			for key, p := range c.points {
				if matchFilter(sel.Filter, p) {
					delete(c.points, key)
				}
			}
		default:
			return invalid("points selector is required")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return updated(req.GetWait(), start), nil
}

func (ps *pointsService) Count(_ context.Context, req *pb.CountPoints) (*pb.CountResponse, error) {
	start := time.Now()
	var n uint64
	err := ps.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		if err := checkFilter(req.GetFilter()); err != nil {
			return err
		}
		for _, p := range c.points {
			if matchFilter(req.GetFilter(), p) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &pb.CountResponse{Result: &pb.CountResult{Count: n}, Time: time.Since(start).Seconds()}, nil
}

func (ps *pointsService) Query(_ context.Context, req *pb.QueryPoints) (*pb.QueryResponse, error) {
	start := time.Now()
	var out []*pb.ScoredPoint
	err := ps.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		var err error
		out, err = c.query(req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &pb.QueryResponse{Result: out, Time: time.Since(start).Seconds()}, nil
}

func (ps *pointsService) QueryBatch(_ context.Context, req *pb.QueryBatchPoints) (*pb.QueryBatchResponse, error) {
	start := time.Now()
	resp := &pb.QueryBatchResponse{}
	err := ps.s.withCollection(req.GetCollectionName(), func(c *collection) error {
		for _, q := range req.GetQueryPoints() {
			if q.GetCollectionName() != "" && q.GetCollectionName() != req.GetCollectionName() {
				return invalid("batch query names another collection: %s", q.GetCollectionName())
			}
			out, err := c.query(q)
			if err != nil {
				return err
			}
			resp.Result = append(resp.Result, &pb.BatchResult{Result: out})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp.Time = time.Since(start).Seconds()
	return resp, nil
}
