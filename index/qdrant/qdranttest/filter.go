package qdranttest

import (
	"fmt"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// checkFilter rejects conditions the fake does not implement, so a test
// never passes on a silently ignored condition.
func checkFilter(f *pb.Filter) error {
	if f == nil {
		return nil
	}
	conds := append(append(append([]*pb.Condition{}, f.GetMust()...), f.GetShould()...), f.GetMustNot()...)
	conds = append(conds, f.GetMinShould().GetConditions()...)
	for _, c := range conds {
		if err := checkCondition(c); err != nil {
			return err
		}
	}
	return nil
}

func unimplemented(what string) error {
	return status.Errorf(codes.Unimplemented, "qdranttest: %s is not implemented", what)
}

func checkCondition(c *pb.Condition) error {
	switch x := c.GetConditionOneOf().(type) {
	case *pb.Condition_Field:
		fc := x.Field
		if fc.GetKey() == "" {
			return status.Error(codes.InvalidArgument, "Wrong input: field condition key is empty")
		}
		if fc.GeoBoundingBox != nil || fc.GeoRadius != nil || fc.GeoPolygon != nil || fc.ValuesCount != nil || fc.DatetimeRange != nil {
			return unimplemented("geo, values_count and datetime_range conditions")
		}
		if fc.Match != nil {
			switch fc.Match.GetMatchValue().(type) {
			case *pb.Match_Keyword, *pb.Match_Keywords, *pb.Match_Integer, *pb.Match_Integers, *pb.Match_Boolean:
			default:
				return unimplemented(fmt.Sprintf("match %T", fc.Match.GetMatchValue()))
			}
		}
		if fc.Match == nil && fc.Range == nil && fc.IsEmpty == nil && fc.IsNull == nil {
			return status.Error(codes.InvalidArgument, "Wrong input: field condition has no condition")
		}
		return nil
	case *pb.Condition_Filter:
		return checkFilter(x.Filter)
	case *pb.Condition_IsEmpty, *pb.Condition_IsNull, *pb.Condition_HasId:
		return nil
	}
	return unimplemented(fmt.Sprintf("condition %T", c.GetConditionOneOf()))
}

func matchAll(fs []*pb.Filter, p *point) bool {
	for _, f := range fs {
		if !matchFilter(f, p) {
			return false
		}
	}
	return true
}

// matchFilter is Qdrant's boolean filter: every must, at least one should
// (when any), no must_not, and min_should's count.
func matchFilter(f *pb.Filter, p *point) bool {
	if f == nil {
		return true
	}
	for _, c := range f.GetMust() {
		if !matchCondition(c, p) {
			return false
		}
	}
	for _, c := range f.GetMustNot() {
		if matchCondition(c, p) {
			return false
		}
	}
	if len(f.GetShould()) > 0 {
		any := false
		for _, c := range f.GetShould() {
			if matchCondition(c, p) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	if ms := f.GetMinShould(); ms != nil {
		n := uint64(0)
		for _, c := range ms.GetConditions() {
			if matchCondition(c, p) {
				n++
			}
		}
		if n < ms.GetMinCount() {
			return false
		}
	}
	return true
}

func matchCondition(c *pb.Condition, p *point) bool {
	switch x := c.GetConditionOneOf().(type) {
	case *pb.Condition_Field:
		return matchField(x.Field, p.payload[x.Field.GetKey()])
	case *pb.Condition_Filter:
		return matchFilter(x.Filter, p)
	case *pb.Condition_IsEmpty:
		return isEmpty(p.payload[x.IsEmpty.GetKey()])
	case *pb.Condition_IsNull:
		v, ok := p.payload[x.IsNull.GetKey()]
		return ok && isNull(v)
	case *pb.Condition_HasId:
		for _, id := range x.HasId.GetHasId() {
			if k, err := pointKey(id); err == nil && k == p.key {
				return true
			}
		}
	}
	return false
}

func isNull(v *pb.Value) bool {
	_, ok := v.GetKind().(*pb.Value_NullValue)
	return ok
}

func isEmpty(v *pb.Value) bool {
	if v == nil || isNull(v) {
		return true
	}
	if l, ok := v.GetKind().(*pb.Value_ListValue); ok {
		return len(l.ListValue.GetValues()) == 0
	}
	return false
}

// scalars flattens an array payload value: Qdrant matches a condition
// against any element.
func scalars(v *pb.Value) []*pb.Value {
	if l, ok := v.GetKind().(*pb.Value_ListValue); ok {
		return l.ListValue.GetValues()
	}
	return []*pb.Value{v}
}

func matchField(fc *pb.FieldCondition, v *pb.Value) bool {
	switch {
	case fc.IsEmpty != nil:
		return isEmpty(v) == fc.GetIsEmpty()
	case fc.IsNull != nil:
		return (v != nil && isNull(v)) == fc.GetIsNull()
	}
	if v == nil {
		return false
	}
	for _, s := range scalars(v) {
		if fc.Match != nil && matchValue(fc.Match, s) {
			return true
		}
		if fc.Range != nil && inRange(fc.Range, s) {
			return true
		}
	}
	return false
}

func matchValue(m *pb.Match, v *pb.Value) bool {
	switch x := m.GetMatchValue().(type) {
	case *pb.Match_Keyword:
		s, ok := v.GetKind().(*pb.Value_StringValue)
		return ok && s.StringValue == x.Keyword
	case *pb.Match_Keywords:
		s, ok := v.GetKind().(*pb.Value_StringValue)
		if !ok {
			return false
		}
		for _, k := range x.Keywords.GetStrings() {
			if s.StringValue == k {
				return true
			}
		}
	case *pb.Match_Integer:
		i, ok := v.GetKind().(*pb.Value_IntegerValue)
		return ok && i.IntegerValue == x.Integer
	case *pb.Match_Integers:
		i, ok := v.GetKind().(*pb.Value_IntegerValue)
		if !ok {
			return false
		}
		for _, k := range x.Integers.GetIntegers() {
			if i.IntegerValue == k {
				return true
			}
		}
	case *pb.Match_Boolean:
		b, ok := v.GetKind().(*pb.Value_BoolValue)
		return ok && b.BoolValue == x.Boolean
	}
	return false
}

func inRange(r *pb.Range, v *pb.Value) bool {
	var f float64
	switch x := v.GetKind().(type) {
	case *pb.Value_IntegerValue:
		f = float64(x.IntegerValue)
	case *pb.Value_DoubleValue:
		f = x.DoubleValue
	default:
		return false
	}
	return (r.Lt == nil || f < r.GetLt()) && (r.Gt == nil || f > r.GetGt()) &&
		(r.Lte == nil || f <= r.GetLte()) && (r.Gte == nil || f >= r.GetGte())
}
