package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contextd/contextd/memory"
)

// Targets (issue 13): a page of 100 turns renders in ≤ 20 ms on a chat of
// 50,000 turns; the chats list at 10,000 chats in ≤ 50 ms. The store/
// sub-benchmarks are the baselines: the store reads alone, same data.

func serve(b *testing.B, h *harness, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "localhost" // httptest's example.com is not a name of this server (api's checkHost)
	rec := httptest.NewRecorder()
	h.srv.Config.Handler.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
}

func BenchmarkChatPage50k(b *testing.B) {
	h := newHarness(b)
	h.seed("default", "big", "u", 50000, func(i int) string {
		return fmt.Sprintf("turn %d: a message of ordinary length about invoices, refunds and delivery dates", i)
	})
	b.Run("page", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			serve(b, h, "/ui/chats/big?after=25000")
		}
	})
	b.Run("store", func(b *testing.B) {
		ctx, k := context.Background(), memory.ChatKey{Tenant: "default", ChatID: "big"}
		for i := 0; i < b.N; i++ {
			if _, err := h.store.Messages(ctx, k, 25000, 100); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkChatsList10k(b *testing.B) {
	h := newHarness(b)
	for i := 0; i < 10000; i++ {
		h.seed("default", fmt.Sprintf("chat-%05d", i), fmt.Sprintf("user-%d", i%100), 3, func(int) string { return "hello" })
	}
	b.Run("page", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			serve(b, h, "/ui/?after=chat-05000")
		}
	})
	b.Run("filtered", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			serve(b, h, "/ui/?q=user-42")
		}
	})
	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := h.store.ListChats(context.Background(), memory.ChatQuery{Tenant: "default", After: "chat-05000", Limit: 51}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
