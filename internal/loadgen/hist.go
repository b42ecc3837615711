package loadgen

import (
	"math/bits"
	"time"
)

// subBits sets the histogram's precision: 2^subBits buckets per power of
// two, so a recorded value is off by less than 1/128 (0.8%).
const subBits = 7

// Histogram is an HDR-like log-linear latency histogram: fixed memory
// (a few thousand counters) whatever the number of samples, exact count,
// min, max and sum. Not safe for concurrent use: each client records into
// its own and the results are merged.
type Histogram struct {
	counts   []uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

// histBuckets covers 0 to 2^40ns (~18 minutes); longer samples land in the
// last bucket (Max stays exact).
// (bucketOf(1<<40) is (40-subBits)<<subBits + 1<<subBits.)
const histBuckets = (40-subBits+1)<<subBits + 1

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]uint64, histBuckets)}
}

// bucketOf maps v to its bucket: values below 2^subBits map to themselves;
// above, v = m<<shift with m in [2^subBits, 2^(subBits+1)), index shift<<subBits + m.
func bucketOf(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return shift<<subBits + int(v>>shift)
}

// upperOf is the largest value that falls in bucket i.
func upperOf(i int) uint64 {
	if i < 1<<subBits {
		return uint64(i)
	}
	shift := i>>subBits - 1
	m := uint64(i - shift<<subBits)
	return (m+1)<<shift - 1
}

// Record adds one sample; negative durations count as 0.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := bucketOf(uint64(d))
	if i >= len(h.counts) {
		i = len(h.counts) - 1
	}
	h.counts[i]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest sample (exact).
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the average sample (exact).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Quantile is the q-quantile (0 < q <= 1): the upper edge of the bucket
// holding the ceil(q*n)-th smallest sample, clamped to the exact max, so it
// never understates a latency.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(upperOf(i)), h.max)
		}
	}
	return h.max
}
