package memory

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
)

// tenantKey is the context key of the request's tenant; unexported so only
// NewContextWithTenant can set it.
type tenantKey struct{}

// NewContextWithTenant returns ctx carrying tenant. The auth middleware
// (API, MCP and inspector alike) calls it once per request; everything
// after it reads the tenant with TenantFromContext.
func NewContextWithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFromContext is the tenant NewContextWithTenant put in ctx, or
// DefaultTenant when none was (auth off, or a background job).
func TenantFromContext(ctx context.Context) string {
	if t, ok := ctx.Value(tenantKey{}).(string); ok && t != "" {
		return t
	}
	return DefaultTenant
}

// TenantInContext is the tenant NewContextWithTenant put in ctx; ok is
// false when none was (a request that did not authenticate).
func TenantInContext(ctx context.Context) (tenant string, ok bool) {
	t, ok := ctx.Value(tenantKey{}).(string)
	return t, ok && t != ""
}

// APIKey is one bearer key and the tenant it fixes (server.auth.api_keys).
type APIKey struct {
	Key    string
	Tenant string
}

// Keyring finds the tenant of a bearer key. Keys are compared in constant
// time over their SHA-256 sums, so neither a key nor its length leaks
// through timing.
type Keyring struct {
	keys []keySum
}

type keySum struct {
	sum    [32]byte
	tenant string
}

// NewKeyring hashes the keys once.
func NewKeyring(keys []APIKey) Keyring {
	k := Keyring{keys: make([]keySum, 0, len(keys))}
	for _, key := range keys {
		k.keys = append(k.keys, keySum{sha256.Sum256([]byte(key.Key)), key.Tenant})
	}
	return k
}

// Enabled reports whether any key is configured (auth on).
func (k Keyring) Enabled() bool { return len(k.keys) > 0 }

// Tenant returns the tenant of key; every configured key is compared, so
// the time taken does not depend on which one matched.
func (k Keyring) Tenant(key string) (string, bool) {
	sum := sha256.Sum256([]byte(key))
	tenant := ""
	for _, e := range k.keys {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			tenant = e.tenant
		}
	}
	return tenant, tenant != ""
}
