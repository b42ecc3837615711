package worker

// Rebuilding after a deleted message. memory.MessageDeleter.DeleteMessage
// tombstones the turn and leaves durable marks in one transaction: the
// episode owning it is marked Rebuild, the chat's summary SummaryDirty, and
// a Deletion row asks for the turn's vectors and profile items to go. The
// Rebuilder works the marks off, per chat and under the chat's summary
// lease the Worker takes for it (so no extension writes over the rebuild):
//
//  1. each episode marked Rebuild is summarised again from its remaining
//     turns (one episode call with an LLM, extractive otherwise) and
//     written with RebuildEpisode and the mark it read;
//  2. a dirty summary is written anew from the last record that cannot
//     hold a deleted turn (CleanSummary: the chat keeps the smallest seq
//     deleted since it was clean), with a rebuild write
//     (memory.RebuildWrite), which keeps that record and the ones before it: with an LLM one root call extending
//     it with the summaries of the episodes ending after it and the open
//     tail's turns (without episodes: with the turns it does not cover);
//     without, the record extended extractively over those turns, a record
//     every checkpointTurns. So a rebuild costs what the turn's stretch
//     holds, not the chat (extensions write the same checkpoints);
//  3. each Deletion row: the user's profile items sourced from a stretch
//     holding the turn are removed, then Done(SweepDeletions). (The turn's points
//     are deleted (Erase) before step 1: once the summary is clean, the
//     read path trusts the chat's retrieval hits.)
//
// Every step is idempotent and the marks stay until their step is done, so
// a crash anywhere is finished by the next pass. So an LLM rebuild costs at
// most the episode's call plus one root call.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/contextd/contextd/memory"
)

// RebuildStore is what the Rebuilder reads and writes: the chats and
// their turns, the marks deleted messages left, and the rebuilt episodes
// and summaries.
type RebuildStore interface {
	turnReader
	Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error)
	ListSummaryWork(ctx context.Context, minPending int64, limit int) ([]memory.Chat, error)
	PendingDeletions(ctx context.Context, limit int) ([]memory.Deletion, error)
	// Done with SweepDeletions drops a handled deletion's Deletion row
	// (memory.Backlogs).
	Done(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error)
	EpisodesToRebuild(ctx context.Context, limit int) ([]memory.EpisodeToRebuild, error)
	RebuildEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error
	CleanSummary(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
	memory.SummaryWriter
}

// ProfileEditor is what the Rebuilder does to the profiles a deleted turn
// fed: it removes the items sourced from it and has the profiler merge
// their chats again.
type ProfileEditor interface {
	Profile(ctx context.Context, tenant, userID string) (memory.ProfileState, int64, error)
	SaveProfile(ctx context.Context, tenant, userID string, st memory.ProfileState, expect int64) error
	// Done with MergeProfile marks, ToSeq 0, makes chats' summaries
	// profile work again (memory.Backlogs).
	Done(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error)
}

// Rebuilder is the job that works off the marks deleted messages left
// (see above). The Worker lists its work and runs it per chat under the
// chat's summary lease, before any extension of the chat.
type Rebuilder struct {
	*Env
	Store RebuildStore
	// Episodes summarises rebuilt episodes again (nil: no episodes are
	// kept; default: the Worker's).
	Episodes *Closer
	// Erase deletes a forgotten turn's vectors (nil: no index).
	Erase PointEraser
	// Profiles loses the profile items sourced from a forgotten turn (nil:
	// no profiles).
	Profiles ProfileEditor
}

// PointEraser removes from the vector index what a deleted turn left
// there (rag.PointEraser): its own points, and an episode's before it is
// rebuilt (the old summaries).
type PointEraser interface {
	EraseTurn(ctx context.Context, f memory.Deletion) error
	EraseEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error
}

// rebuildBatch bounds the marks one pass reads.
const rebuildBatch = 50

// work lists the chats holding marks, with their Deletion rows. A
// dirty summary is a mark of its own: an extension over a turn deleted
// before the summariser read it marks the summary dirty too (the store
// cannot tell when the turn went), with no episode or Deletion row behind
// it, and the chat may have nothing left to summarise.
func (r *Rebuilder) work(ctx context.Context) ([]memory.ChatKey, map[memory.ChatKey][]memory.Deletion, error) {
	eps, err := r.Store.EpisodesToRebuild(ctx, rebuildBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: episodes to rebuild: %w", err)
	}
	fs, err := r.Store.PendingDeletions(ctx, rebuildBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: pending forgets: %w", err)
	}
	// No backlog reaches MaxInt64: only the dirty chats are listed.
	dirty, err := r.Store.ListSummaryWork(ctx, math.MaxInt64, rebuildBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: dirty summaries: %w", err)
	}
	var keys []memory.ChatKey
	forgets := map[memory.ChatKey][]memory.Deletion{}
	for _, e := range eps {
		if k := e.Chat.Key(); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, c := range dirty {
		if k := c.Key(); c.SummaryDirty && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, f := range fs {
		if !slices.Contains(keys, f.Chat) {
			keys = append(keys, f.Chat)
		}
		forgets[f.Chat] = append(forgets[f.Chat], f)
	}
	return keys, forgets, nil
}

// rebuild rebuilds the chat's marked episodes, then its summary when
// dirty, then does its Deletion rows. It holds the chat's summary lease.
func (r *Rebuilder) rebuild(ctx context.Context, key memory.ChatKey, forgets []memory.Deletion) error {
	chat, err := r.Store.Chat(ctx, key)
	if err != nil {
		return fmt.Errorf("worker: chat: %w", err)
	}
	s := r.settings(chat.Agent)
	r.Episodes.forget(key) // they may hold what the deleted turn said
	// The points go first: once the summary is clean, the read path
	// trusts the chat's hits.
	for _, f := range forgets {
		if err := r.eraseTurn(ctx, f); err != nil {
			return err
		}
	}
	if err := r.rebuildEpisodes(ctx, chat, s); err != nil {
		return err
	}
	if chat, err = r.Store.Chat(ctx, key); err != nil {
		return fmt.Errorf("worker: chat: %w", err)
	}
	if chat.SummaryDirty {
		if err := r.rebuildSummary(ctx, chat, s); err != nil {
			return err
		}
	}
	for _, f := range forgets {
		if err := r.forgetTurn(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// rebuildEpisodes summarises again each of the chat's episodes marked for
// rebuild, from its remaining turns.
func (r *Rebuilder) rebuildEpisodes(ctx context.Context, chat memory.Chat, s Settings) error {
	if r.Episodes == nil {
		return nil
	}
	defer r.derived() // rebuilt episodes (and their facts) are indexed again
	eps, err := r.Episodes.Store.Episodes(ctx, chat.Key(), memory.EpisodeQuery{})
	if err != nil {
		return fmt.Errorf("worker: episodes: %w", err)
	}
	for i, ep := range eps {
		if !ep.Rebuild {
			continue
		}
		if i+1 < len(eps) && !eps[i+1].Rebuild {
			// The next episode was summarised with this one's last turns
			// as context (episode_overlap): it may say what a deleted one
			// said. It goes first: ep's mark keeps the work until both
			// are done.
			read, err := r.deletedIn(ctx, chat.Key(), max(ep.FromSeq-1, ep.ToSeq-int64(s.Episodes.Overlap)), ep.ToSeq)
			if err != nil {
				return err
			}
			if read {
				if err := r.rebuildEpisode(ctx, chat, s, eps[i+1]); err != nil {
					return err
				}
			}
		}
		if err := r.rebuildEpisode(ctx, chat, s, ep); err != nil {
			return err
		}
	}
	return nil
}

// deletedIn reports whether a turn in (after, upTo] is a tombstone.
func (r *Rebuilder) deletedIn(ctx context.Context, key memory.ChatKey, after, upTo int64) (bool, error) {
	turns, err := readTurns(ctx, r.Store, key, after, upTo)
	if err != nil {
		return false, err
	}
	return len(alive(turns)) < len(turns), nil
}

// rebuildEpisode writes ep's summaries and facts anew from its turns (the
// tombstones left out), keeping its range; the mark it read clears Rebuild
// unless another turn of it was deleted meanwhile.
func (r *Rebuilder) rebuildEpisode(ctx context.Context, chat memory.Chat, s Settings, ep memory.Episode) error {
	key := chat.Key()
	turns, err := readTurns(ctx, r.Store, key, ep.FromSeq-1, ep.ToSeq)
	if err != nil {
		return err
	}
	ctxTurns, err := readTurns(ctx, r.Store, key, max(0, ep.FromSeq-1-int64(s.Episodes.Overlap)), ep.FromSeq-1)
	if err != nil {
		return err
	}
	fresh := memory.Episode{Short: "", Summary: memory.Summary{CoveredFromSeq: ep.FromSeq, CoveredToSeq: ep.ToSeq},
		Model: r.Fallback.Name(), PromptVersion: r.Fallback.PromptVersion(memory.Prompts{})}
	var res memory.EpisodeResult
	if len(turns) > 0 {
		if fresh, res, err = r.Episodes.summarizeEpisode(ctx, chat, s, ctxTurns, turns); err != nil {
			return err
		}
		r.Budget.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("worker: episode rebuild abandoned: %w", err)
	}
	if r.Erase != nil {
		if err := r.Erase.EraseEpisode(ctx, key, ep); err != nil {
			return err
		}
	}
	out := ep
	out.Short, out.Summary, out.Model, out.PromptVersion, out.Facts = fresh.Short, fresh.Summary, fresh.Model, fresh.PromptVersion, res.Facts
	if err := r.Store.RebuildEpisode(ctx, key, out); err != nil {
		return fmt.Errorf("worker: rebuild episode %d..%d: %w", ep.FromSeq, ep.ToSeq, err)
	}
	r.Logger.Debug("episode rebuilt", "tenant", key.Tenant, "chat", key.ChatID, "from", ep.FromSeq, "to", ep.ToSeq, "calls", res.Calls)
	return nil
}

// eraseTurn deletes the forgotten turn's points.
func (r *Rebuilder) eraseTurn(ctx context.Context, f memory.Deletion) error {
	if r.Erase == nil {
		return nil
	}
	return r.Erase.EraseTurn(ctx, f)
}

// forgetTurn removes the profile items sourced from the forgotten turn
// (its points are gone already), then drops the Deletion row.
func (r *Rebuilder) forgetTurn(ctx context.Context, f memory.Deletion) error {
	if r.Profiles != nil && f.UserID != "" {
		if err := r.forgetInProfile(ctx, f); err != nil {
			return err
		}
	}
	if _, err := r.Store.Done(ctx, memory.SweepDeletions, []memory.Mark{{Chat: f.Chat, Seqs: []int64{f.Seq}}}); err != nil {
		return fmt.Errorf("worker: forget done: %w", err)
	}
	return nil
}

// forgetInProfile removes the user's profile items sourced from a stretch
// holding the turn, with compare-and-swap (retried when the profiler wrote
// in between), then has the profiler merge again the summaries they came
// from (the chat's own, rebuilt by now, and other chats'), which state
// again what still holds. The request path may have removed the items
// already (Service.forgetNow, which re-merges their other chats): the
// chat's own summary is merged again in any case.
func (r *Rebuilder) forgetInProfile(ctx context.Context, f memory.Deletion) error {
	chats := []string{f.Chat.ChatID}
	for attempt := 0; ; attempt++ {
		st, v, err := r.Profiles.Profile(ctx, f.Chat.Tenant, f.UserID)
		if err != nil {
			return fmt.Errorf("worker: profile: %w", err)
		}
		if v == 0 {
			return nil
		}
		gone := st.WithoutTurn(f.Chat.ChatID, f.Seq)
		if len(gone) == 0 {
			break
		}
		err = r.Profiles.SaveProfile(ctx, f.Chat.Tenant, f.UserID, st, v)
		if err == nil {
			chats = append(chats, memory.SourceChats(gone)...)
			break
		}
		if !errors.Is(err, memory.ErrConflict) || attempt == 5 {
			return fmt.Errorf("worker: save profile: %w", err)
		}
	}
	return remerge(ctx, r.Profiles, f.Chat.Tenant, chats)
}

// remerge makes the chats' summaries profile work again (each once), in
// one write: MergeProfile marks with ToSeq 0.
func remerge(ctx context.Context, ps ProfileEditor, tenant string, chats []string) error {
	slices.Sort(chats)
	var marks []memory.Mark
	for _, c := range slices.Compact(chats) {
		marks = append(marks, memory.Mark{Chat: memory.ChatKey{Tenant: tenant, ChatID: c}})
	}
	if _, err := ps.Done(ctx, memory.MergeProfile, marks); err != nil {
		return fmt.Errorf("worker: remerge profile: %w", err)
	}
	return nil
}
