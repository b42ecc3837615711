package memory_test

import (
	"context"
	"testing"

	"github.com/contextd/contextd/memory"
)

func TestTenantContext(t *testing.T) {
	if got := memory.TenantFromContext(context.Background()); got != memory.DefaultTenant {
		t.Errorf("no tenant set: got %q, want %q", got, memory.DefaultTenant)
	}
	ctx := memory.NewContextWithTenant(context.Background(), "acme")
	if got := memory.TenantFromContext(ctx); got != "acme" {
		t.Errorf("got %q, want acme", got)
	}
	if got := memory.TenantFromContext(memory.NewContextWithTenant(ctx, "other")); got != "other" {
		t.Errorf("the innermost tenant wins: got %q", got)
	}
}

func TestKeyring(t *testing.T) {
	k := memory.NewKeyring([]memory.APIKey{{Key: "key-a", Tenant: "a"}, {Key: "key-b", Tenant: "b"}})
	for _, c := range []struct {
		key, tenant string
		ok          bool
	}{
		{"key-a", "a", true}, {"key-b", "b", true}, {"key-c", "", false}, {"", "", false}, {"key-a ", "", false},
	} {
		if tenant, ok := k.Tenant(c.key); tenant != c.tenant || ok != c.ok {
			t.Errorf("Tenant(%q) = %q, %v; want %q, %v", c.key, tenant, ok, c.tenant, c.ok)
		}
	}
	if !k.Enabled() || memory.NewKeyring(nil).Enabled() {
		t.Error("Enabled should report whether keys are configured")
	}
}
