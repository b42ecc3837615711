package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
)

// TryLeases takes the leases it can of keys in one transaction, when they
// are free or expired (never re-entered, see memory.Leases).
func (s *Store) TryLeases(ctx context.Context, keys []memory.ChatKey, kind, owner string, ttl time.Duration) ([]bool, error) {
	if err := memory.CheckLease(kind, owner); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	taken := make([]bool, len(keys))
	if len(keys) == 0 {
		return taken, nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		pks, try := tx.StmtContext(ctx, s.ws.chatPK), tx.StmtContext(ctx, s.ws.tryLease)
		now := s.now()
		for i, key := range keys {
			pk, err := chatPK(ctx, pks, key)
			if errors.Is(err, memory.ErrNotFound) {
				taken[i] = false // the retry of a failed write starts over
				continue
			}
			if err != nil {
				return err
			}
			r, err := try.ExecContext(ctx, pk, kind, owner, micros(now.Add(ttl)), micros(now))
			if err != nil {
				return err
			}
			n, err := r.RowsAffected()
			if err != nil {
				return err
			}
			taken[i] = n > 0
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: leases: %w", err)
	}
	return taken, nil
}

// ReleaseLeases drops owner's leases on keys, those it holds, in one
// transaction.
func (s *Store) ReleaseLeases(ctx context.Context, keys []memory.ChatKey, kind, owner string) error {
	if len(keys) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		rel := tx.StmtContext(ctx, s.ws.releaseLease)
		for _, key := range keys {
			if _, err := rel.ExecContext(ctx, kind, owner, key.Tenant, key.ChatID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: release leases: %w", err)
	}
	return nil
}

// RenewLease extends owner's unexpired lease until now+ttl.
func (s *Store) RenewLease(ctx context.Context, key memory.ChatKey, kind, owner string, ttl time.Duration) (bool, error) {
	var got bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := s.now()
		r, err := tx.StmtContext(ctx, s.ws.renewLease).ExecContext(ctx,
			micros(now.Add(ttl)), kind, owner, micros(now), key.Tenant, key.ChatID)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		got = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: renew lease: %w", err)
	}
	return got, nil
}
