package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/jackc/pgx/v5"
)

// tryLeaseSQL takes one lease ($1 tenant, $2 chat, $3 kind, $4 owner, $5
// ttl in microseconds); no row when it is held or the chat does not exist.
const tryLeaseSQL = `INSERT INTO leases (chat, kind, owner, expires_at)
	SELECT id, $3, $4, clock_timestamp() + $5::bigint * interval '1 microsecond'
	FROM chats WHERE tenant = $1 AND chat_id = $2
	ON CONFLICT (chat, kind) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
	WHERE leases.expires_at <= clock_timestamp()
	RETURNING true`

// TryLeases takes the leases it can of keys in one round trip (a batch
// of atomic upserts), by the server's clock (one clock for every
// replica), when they are free or expired (never re-entered, see
// memory.Leases).
func (s *Store) TryLeases(ctx context.Context, keys []memory.ChatKey, kind, owner string, ttl time.Duration) ([]bool, error) {
	if err := memory.CheckLease(kind, owner); err != nil {
		return nil, wrap("leases", err)
	}
	taken := make([]bool, len(keys))
	if len(keys) == 0 {
		return taken, nil
	}
	var b pgx.Batch
	for _, k := range keys {
		b.Queue(tryLeaseSQL, k.Tenant, k.ChatID, kind, owner, ttl.Microseconds())
	}
	br := s.pool.SendBatch(ctx, &b)
	defer br.Close()
	for i := range keys {
		err := br.QueryRow().Scan(&taken[i])
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, wrap("leases", err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, wrap("leases", err)
	}
	return taken, nil
}

// ReleaseLeases drops owner's leases on keys, those it holds, in one
// statement.
func (s *Store) ReleaseLeases(ctx context.Context, keys []memory.ChatKey, kind, owner string) error {
	if len(keys) == 0 {
		return nil
	}
	tenants, chats := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		tenants[i], chats[i] = k.Tenant, k.ChatID
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE kind = $3 AND owner = $4
		AND chat IN (SELECT c.id FROM chats c JOIN unnest($1::text[], $2::text[]) AS k(tenant, chat_id)
			ON c.tenant = k.tenant AND c.chat_id = k.chat_id)`,
		tenants, chats, kind, owner); err != nil {
		return wrap("release leases", err)
	}
	return nil
}

// RenewLease extends owner's unexpired lease until now+ttl.
func (s *Store) RenewLease(ctx context.Context, key memory.ChatKey, kind, owner string, ttl time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE leases SET expires_at = clock_timestamp() + $5::bigint * interval '1 microsecond'
		WHERE kind = $3 AND owner = $4 AND expires_at > clock_timestamp()
		AND chat = (SELECT id FROM chats WHERE tenant = $1 AND chat_id = $2)`,
		key.Tenant, key.ChatID, kind, owner, ttl.Microseconds())
	if err != nil {
		return false, wrap("renew lease", err)
	}
	return tag.RowsAffected() > 0, nil
}
