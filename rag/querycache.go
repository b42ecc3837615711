package rag

import (
	"container/list"
	"context"
	"sync"
)

// QueryCache is a bounded LRU of query embeddings in front of an embedder:
// a supervisor that asks the same query again (retries, several agents on
// one turn) pays the remote embedder's round trip once. Only EmbedQuery is
// cached; EmbedDocuments (the indexer) passes through. Keys carry the
// embedder's identity (provider, model, endpoint, dimensions), so a config
// change never serves a vector from another model.
type QueryCache struct {
	inner Embedder
	ident string
	size  int
	// OnLookup, when set, is told whether each query hit (metrics).
	OnLookup func(hit bool)

	mu    sync.Mutex
	order *list.List // front: most recently used
	byKey map[string]*list.Element
}

type cached struct {
	key string
	vec []float32
}

// NewQueryCache caches up to size query vectors of inner, whose identity
// (e.g. "openai|text-embedding-3-small|https://…|1536") is part of every key.
func NewQueryCache(inner Embedder, ident string, size int) *QueryCache {
	return &QueryCache{inner: inner, ident: ident, size: max(1, size), order: list.New(), byKey: map[string]*list.Element{}}
}

// EmbedDocuments is not cached: documents are embedded once, by the indexer.
func (c *QueryCache) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return c.inner.EmbedDocuments(ctx, texts)
}

// EmbedQuery answers from the cache, else asks the embedder and keeps the
// answer. Errors are not cached. Callers must not modify the vector.
func (c *QueryCache) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	key := c.ident + "\x00" + text
	if v, ok := c.get(key); ok {
		c.lookup(true)
		return v, nil
	}
	c.lookup(false)
	v, err := c.inner.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	c.put(key, v)
	return v, nil
}

// Dimensions passes the inner embedder's size through.
func (c *QueryCache) Dimensions() int {
	if d, ok := c.inner.(Dimensioner); ok {
		return d.Dimensions()
	}
	return 0
}

// Len is the number of cached vectors.
func (c *QueryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *QueryCache) lookup(hit bool) {
	if c.OnLookup != nil {
		c.OnLookup(hit)
	}
}

func (c *QueryCache) get(key string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).vec, true
}

func (c *QueryCache) put(key string, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		e.Value.(*cached).vec = v
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(&cached{key, v})
	for c.order.Len() > c.size {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byKey, old.Value.(*cached).key)
	}
}
