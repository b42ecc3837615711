package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
)

var _ memory.ProfileStore = (*Store)(nil)

// Profile returns the user's profile state and version (zero and 0: none).
func (s *Store) Profile(ctx context.Context, tenant, userID string) (memory.ProfileState, int64, error) {
	var st memory.ProfileState
	var js string
	var v int64
	err := s.rs.profile.QueryRowContext(ctx, tenant, userID).Scan(&js, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return st, 0, nil
	}
	if err != nil {
		return st, 0, fmt.Errorf("sqlite: profile: %w", err)
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return st, 0, fmt.Errorf("sqlite: profile of %s: %w", userID, err)
	}
	return st, v, nil
}

// ProfileVersion is the version of the user's profile (0: none).
func (s *Store) ProfileVersion(ctx context.Context, tenant, userID string) (int64, error) {
	var v int64
	err := s.rs.profileVersion.QueryRowContext(ctx, tenant, userID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: profile version: %w", err)
	}
	return v, nil
}

// SaveProfile writes st when the stored version is still expect.
func (s *Store) SaveProfile(ctx context.Context, tenant, userID string, st memory.ProfileState, expect int64) error {
	js, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("sqlite: save profile: %w", err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var r sql.Result
		var err error
		if expect == 0 {
			r, err = tx.ExecContext(ctx, `INSERT INTO profiles (tenant, user_id, state, version, updated_at) VALUES (?, ?, ?, 1, ?)
				ON CONFLICT (tenant, user_id) DO NOTHING`, tenant, userID, string(js), micros(s.now()))
		} else {
			r, err = tx.ExecContext(ctx, `UPDATE profiles SET state = ?, version = version + 1, updated_at = ?
				WHERE tenant = ? AND user_id = ? AND version = ?`, string(js), micros(s.now()), tenant, userID, expect)
		}
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return memory.ErrConflict
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: save profile: %w", err)
	}
	return nil
}

// DeleteProfile erases the user's profile.
func (s *Store) DeleteProfile(ctx context.Context, tenant, userID string) error {
	defer s.cp.scrubSoon() // what it erases must leave the WAL too
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE tenant = ? AND user_id = ?`, tenant, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete profile: %w", err)
	}
	return nil
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	return alias + strings.ReplaceAll(cols, ", ", ", "+alias)
}
