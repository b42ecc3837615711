package memory

import (
	"context"
	"errors"
	"time"
)

// DefaultLeaseTTL is the one lease TTL of background work (summaries,
// indexing): how long a chat stays claimed by a process that died (kill
// -9). A held lease is renewed every third of it, so a short TTL costs
// little and a crashed replica's chats are picked up within seconds.
const DefaultLeaseTTL = 15 * time.Second

// leaseReleaseTimeout bounds a release run after the work's context ended.
const leaseReleaseTimeout = 5 * time.Second

// ErrLeaseLost is the cause of a Keep context cancelled because another
// owner took the lease (it expired between two renewals).
var ErrLeaseLost = errors.New("memory: lease lost")

// ChatLeases is Leases with the chat reader that tells a chat that does
// not exist from a lease another owner holds (TryLease).
type ChatLeases interface {
	Leases
	Chat(ctx context.Context, key ChatKey) (Chat, error)
}

// CheckLease is the rule every store applies to a lease it takes: a lease
// has a kind and an owner.
func CheckLease(kind, owner string) error {
	if kind == "" || owner == "" {
		return errors.New("lease: empty kind or owner")
	}
	return nil
}

// TryLease is TryLeases of one chat: true when owner took the lease,
// false while another owner (or owner itself: never re-entered) holds it,
// ErrNotFound when the chat does not exist.
func TryLease(ctx context.Context, l ChatLeases, key ChatKey, kind, owner string, ttl time.Duration) (bool, error) {
	taken, err := l.TryLeases(ctx, []ChatKey{key}, kind, owner, ttl)
	if err != nil {
		return false, err
	}
	if len(taken) == 1 && taken[0] {
		return true, nil
	}
	// Held by another owner, or no such chat.
	if _, err := l.Chat(ctx, key); err != nil {
		return false, err
	}
	return false, nil
}

// ReleaseLease is ReleaseLeases of one chat: it drops owner's lease (no
// error when it does not hold it).
func ReleaseLease(ctx context.Context, l Leases, key ChatKey, kind, owner string) error {
	return l.ReleaseLeases(ctx, []ChatKey{key}, kind, owner)
}

// HeldLease is a lease TakeLease took: the one take/renew/release loop of
// every background worker. Leases are never re-entered (TryLeases takes
// only a free or expired lease; RenewLease extends one's own), so a
// HeldLease is released exactly once, by its taker.
type HeldLease struct {
	l           Leases
	key         ChatKey
	kind, owner string
	ttl         time.Duration
}

// TakeLease takes the named lease on the chat for owner (ttl <= 0:
// DefaultLeaseTTL). It returns nil and no error when another owner holds
// it.
func TakeLease(ctx context.Context, l ChatLeases, key ChatKey, kind, owner string, ttl time.Duration) (*HeldLease, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	ok, err := TryLease(ctx, l, key, kind, owner, ttl)
	if err != nil || !ok {
		return nil, err
	}
	return &HeldLease{l: l, key: key, kind: kind, owner: owner, ttl: ttl}, nil
}

// Keep renews the lease every third of its TTL until stop is called. The
// returned context is cancelled, with cause ErrLeaseLost, when a renewal
// finds the lease taken by another owner: the work must then stop without
// writing. A failed renewal (the store unreachable) is retried at the next
// tick; the lease may expire meanwhile, which the next renewal notices.
func (h *HeldLease) Keep(ctx context.Context) (work context.Context, stop func()) {
	work, cancel := context.WithCancelCause(ctx)
	go func() {
		t := time.NewTicker(max(h.ttl/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-work.Done():
				return
			case <-t.C:
				ok, err := h.l.RenewLease(work, h.key, h.kind, h.owner, h.ttl)
				if work.Err() != nil {
					return
				}
				if err == nil && !ok {
					cancel(ErrLeaseLost)
					return
				}
			}
		}
	}()
	return work, func() { cancel(nil) }
}

// Release drops the lease, even when ctx is cancelled (a stale lease would
// block other replicas until it expires). When it fails the lease simply
// expires.
func (h *HeldLease) Release(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReleaseTimeout)
	defer cancel()
	return ReleaseLease(rctx, h.l, h.key, h.kind, h.owner)
}

// TakeLeases is TakeLease for several chats in one write: held[i] is nil
// where keys[i] is held by another owner or does not exist.
func TakeLeases(ctx context.Context, l Leases, keys []ChatKey, kind, owner string, ttl time.Duration) ([]*HeldLease, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	held := make([]*HeldLease, len(keys))
	if len(keys) == 0 {
		return held, nil
	}
	taken, err := l.TryLeases(ctx, keys, kind, owner, ttl)
	if err != nil {
		return nil, err
	}
	for i, ok := range taken {
		if ok {
			held[i] = &HeldLease{l: l, key: keys[i], kind: kind, owner: owner, ttl: ttl}
		}
	}
	return held, nil
}

// ReleaseAll drops held leases (nil ones skipped) in one write per store,
// kind and owner, even when ctx is cancelled. When it fails the leases
// simply expire.
func ReleaseAll(ctx context.Context, held []*HeldLease) error {
	type group struct {
		l           Leases
		kind, owner string
	}
	keys := map[group][]ChatKey{}
	var order []group
	for _, h := range held {
		if h == nil {
			continue
		}
		g := group{h.l, h.kind, h.owner}
		if _, ok := keys[g]; !ok {
			order = append(order, g)
		}
		keys[g] = append(keys[g], h.key)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReleaseTimeout)
	defer cancel()
	var errs []error
	for _, g := range order {
		errs = append(errs, g.l.ReleaseLeases(rctx, keys[g], g.kind, g.owner))
	}
	return errors.Join(errs...)
}
