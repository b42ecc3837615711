package main

import (
	"context"
	"fmt"
	"io"

	"github.com/contextd/contextd/cmd/contextd/internal/eval"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// evalRetrieval runs `contextd eval <bench> --retrieval`: evidence
// recall@k of the retriever's ranking alone, per side of the hybrid search.
func evalRetrieval(ctx context.Context, bench, data string, limit int, newSystem eval.NewSystem, o eval.Options, stdout io.Writer) error {
	var rep *eval.RetrievalReport
	if bench == "beam" {
		chats, err := eval.LoadBEAM(data)
		if err != nil {
			return err
		}
		if limit > 0 && limit < len(chats) {
			chats = chats[:limit]
		}
		if rep, err = eval.RetrievalBEAM(ctx, chats, newSystem, o); err != nil {
			return err
		}
	} else {
		convs, err := eval.LoadLoCoMo(data)
		if err != nil {
			return err
		}
		if limit > 0 && limit < len(convs) {
			convs = convs[:limit]
		}
		if rep, err = eval.RetrievalLoCoMo(ctx, convs, newSystem, o); err != nil {
			return err
		}
	}
	rep.Write(stdout)
	return nil
}

// retrievalProbe ranks a chat's turns with the app's retriever, on one
// side of the hybrid query or both (nil without an index). The fused side
// drops dense candidates below the default agent's rag_similarity_threshold,
// as /v1/context does; the dense side and SideFusedAll keep them all.
func retrievalProbe(app *App) eval.Probe {
	if app.Retriever == nil {
		return nil
	}
	threshold := app.Service.PolicyOf(memory.DefaultAgent).RAGThreshold
	return func(ctx context.Context, chat, query string, k int, side string) ([]int64, error) {
		r := &rag.Retriever{Embedder: app.Retriever.Embedder, Sparse: app.Retriever.Sparse,
			Index: sideIndex{Index: app.Retriever.Index, side: side}}
		req := rag.SearchRequest{Tenant: "eval", ChatID: chat, Query: query, K: k, Kinds: []string{memory.KindTurn}}
		if side == eval.SideFused {
			req.Threshold = threshold
		}
		turns, err := r.Search(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("retrieval probe: %w", err)
		}
		seqs := make([]int64, len(turns))
		for i, t := range turns {
			seqs[i] = t.Seq
		}
		return seqs, nil
	}
}

// sideIndex keeps one side of every hybrid query: eval.SideDense drops the
// sparse vector, eval.SideSparse the dense one, the fused sides keep both.
type sideIndex struct {
	rag.Index
	side string
}

func (s sideIndex) Query(ctx context.Context, q rag.Query) ([]rag.Hit, error) {
	switch s.side {
	case eval.SideDense:
		q.Sparse = rag.SparseVector{}
	case eval.SideSparse:
		q.Dense = nil
	}
	return s.Index.Query(ctx, q)
}
