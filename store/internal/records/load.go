package records

import (
	"context"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/chain"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

// LoadTx is one store's raw operations for loading one dump record, inside
// its transaction.
type LoadTx interface {
	// InsertChat inserts the chat as it is unless the tenant holds its id
	// already: then added is false and user is the stored chat's user.
	InsertChat(ctx context.Context, c memory.Chat) (added bool, user string, err error)
	// Chat reads the chat (holding its row) and its raw operations;
	// ErrNotFound when it does not exist.
	Chat(ctx context.Context, key memory.ChatKey) (Tx, memory.Chat, error)
}

// Load stores one dump record other than a profile (see memory.Dumper):
// as it is, idempotently (false when the store holds it already); a
// record that contradicts the store or does not continue its chat is
// ErrConflict.
func Load(ctx context.Context, tx LoadTx, rec memory.DumpRecord, now time.Time) (bool, error) {
	if rec.Type == memory.DumpChat {
		return loadChat(ctx, tx, *rec.Chat, now)
	}
	ct, chat, err := tx.Chat(ctx, memory.ChatKey{Tenant: rec.Tenant, ChatID: rec.ChatID})
	if err != nil {
		return false, fmt.Errorf("%w (its chat record must come first)", err)
	}
	switch rec.Type {
	case memory.DumpMessage:
		return loadMessage(ctx, ct, chat, *rec.Message, now)
	case memory.DumpSummaryRecord:
		return chain.Load(ctx, ct, chat, *rec.Summary, ct.CheckID)
	case memory.DumpEpisode:
		return loadEpisode(ctx, ct, chat, *rec.Episode)
	case memory.DumpFact:
		return loadFact(ctx, ct, chat, *rec.Fact, now)
	}
	return false, fmt.Errorf("unknown record type %q", rec.Type)
}

func loadChat(ctx context.Context, tx LoadTx, c memory.Chat, now time.Time) (bool, error) {
	for _, t := range []string{c.Tenant, c.ID, c.UserID, c.Agent} {
		if err := sqlbatch.CheckText(t); err != nil {
			return false, fmt.Errorf("chat %q: %w: %w", c.ID, err, memory.ErrConflict)
		}
	}
	if c.Agent == "" {
		c.Agent = memory.DefaultAgent
	}
	c.CreatedAt, c.UpdatedAt = orNow(c.CreatedAt, now), orNow(c.UpdatedAt, now)
	added, user, err := tx.InsertChat(ctx, c)
	if err != nil || added {
		return added, err
	}
	if user != c.UserID {
		return false, fmt.Errorf("chat %q belongs to user %q, the dump says %q: %w", c.ID, user, c.UserID, memory.ErrConflict)
	}
	return false, nil
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t.UTC().Truncate(time.Microsecond)
}

func loadMessage(ctx context.Context, tx Tx, chat memory.Chat, m memory.Message, now time.Time) (bool, error) {
	if ok, err := tx.MessageExists(ctx, m.ID); err != nil || ok {
		return false, err
	}
	if m.Seq != chat.LastSeq+1 {
		return false, fmt.Errorf("message %q: seq %d does not follow the chat's last seq %d: %w", m.ID, m.Seq, chat.LastSeq, memory.ErrConflict)
	}
	b, err := sqlbatch.PrepareBatch(memory.AppendRequest{Chat: chat.Key(), Messages: []memory.Message{m}}, now)
	if err != nil {
		return false, fmt.Errorf("%w: %w", err, memory.ErrConflict)
	}
	p := b.Msgs[0]
	p.Deleted = m.Deleted
	if err := tx.InsertMessage(ctx, m.Seq, p, b.Meta[0], now); err != nil {
		return false, err
	}
	return true, nil
}

func loadEpisode(ctx context.Context, tx Tx, chat memory.Chat, e memory.Episode) (bool, error) {
	if err := tx.CheckID(e.ID); err != nil {
		return false, fmt.Errorf("episode: %w: %w", err, memory.ErrConflict)
	}
	exists, ours, err := tx.EpisodeOwner(ctx, e.ID)
	if err != nil || (exists && ours) {
		return false, err
	}
	if exists {
		return false, fmt.Errorf("episode %q belongs to another chat: %w", e.ID, memory.ErrConflict)
	}
	lastTo, err := tx.LastEpisodeTo(ctx)
	if err != nil {
		return false, err
	}
	eps := []memory.Episode{e}
	js, err := sqlbatch.PrepareEpisodes(lastTo, chat.LastSeq, eps, e.CreatedAt)
	if err != nil {
		return false, err
	}
	e = eps[0]
	e.RebuildMark = 0
	if e.Rebuild {
		e.RebuildMark = 1
	}
	if err := tx.InsertEpisode(ctx, e, js[0]); err != nil {
		return false, err
	}
	return true, nil
}

func loadFact(ctx context.Context, tx Tx, chat memory.Chat, f memory.Fact, now time.Time) (bool, error) {
	if ok, err := tx.FactExists(ctx, f.ID); err != nil || ok {
		return false, err
	}
	facts, err := sqlbatch.PrepareFacts(chat.Tenant, chat.ID, f.EpisodeID, chat.LastSeq, []memory.Fact{f}, now)
	if err != nil {
		return false, err
	}
	if err := tx.InsertFacts(ctx, facts); err != nil {
		return false, err
	}
	return true, nil
}
