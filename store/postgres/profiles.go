package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
)

var _ memory.ProfileStore = (*Store)(nil)

// Profile returns the user's profile state and version (zero and 0: none).
func (s *Store) Profile(ctx context.Context, tenant, userID string) (memory.ProfileState, int64, error) {
	var st memory.ProfileState
	var js []byte
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT state, version FROM profiles WHERE tenant = $1 AND user_id = $2`, tenant, userID).Scan(&js, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, 0, nil
	}
	if err != nil {
		return st, 0, wrap("profile", err)
	}
	if err := json.Unmarshal(js, &st); err != nil {
		return st, 0, fmt.Errorf("postgres: profile of %s: %w", userID, err)
	}
	return st, v, nil
}

// ProfileVersion is the version of the user's profile (0: none).
func (s *Store) ProfileVersion(ctx context.Context, tenant, userID string) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM profiles WHERE tenant = $1 AND user_id = $2`, tenant, userID).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, wrap("profile version", err)
}

// SaveProfile writes st when the stored version is still expect.
func (s *Store) SaveProfile(ctx context.Context, tenant, userID string, st memory.ProfileState, expect int64) error {
	js, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("postgres: save profile: %w", err)
	}
	var n int64
	if expect == 0 {
		tag, err := s.pool.Exec(ctx, `INSERT INTO profiles (tenant, user_id, state, version, updated_at) VALUES ($1, $2, $3, 1, now())
			ON CONFLICT (tenant, user_id) DO NOTHING`, tenant, userID, js)
		if err != nil {
			return wrap("save profile", err)
		}
		n = tag.RowsAffected()
	} else {
		tag, err := s.pool.Exec(ctx, `UPDATE profiles SET state = $3, version = version + 1, updated_at = now()
			WHERE tenant = $1 AND user_id = $2 AND version = $4`, tenant, userID, js, expect)
		if err != nil {
			return wrap("save profile", err)
		}
		n = tag.RowsAffected()
	}
	if n == 0 {
		return fmt.Errorf("postgres: save profile: %w", memory.ErrConflict)
	}
	return nil
}

// DeleteProfile erases the user's profile.
func (s *Store) DeleteProfile(ctx context.Context, tenant, userID string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM profiles WHERE tenant = $1 AND user_id = $2`, tenant, userID)
	return wrap("delete profile", err)
}
