package worker

// Rebuilding after a deleted message. memory.MessageForgetter.DeleteMessage
// tombstones the turn and leaves durable marks in one transaction: the
// episode owning it is marked Rebuild, the chat's summary SummaryDirty, and
// a Forget row asks for the turn's vectors and profile items to go. The
// worker works the marks off, per chat and under the chat's summary lease
// (so no extension writes over the rebuild):
//
//  1. each episode marked Rebuild is summarised again from its remaining
//     turns (one episode call with an LLM, extractive otherwise) and
//     written with RebuildEpisode and the mark it read;
//  2. a dirty summary is written anew from the last record that cannot
//     hold a deleted turn (CleanSummary: the chat keeps the smallest seq
//     deleted since it was clean), with RebuildSummary, which keeps that
//     record and the ones before it: with an LLM one root call extending
//     it with the summaries of the episodes ending after it and the open
//     tail's turns (without episodes: with the turns it does not cover);
//     without, the record extended extractively over those turns, a record
//     every checkpointTurns. So a rebuild costs what the turn's stretch
//     holds, not the chat (extensions write the same checkpoints);
//  3. each Forget row: the user's profile items sourced from a stretch
//     holding the turn are removed, then ForgetDone. (The turn's points
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

// PointEraser removes from the vector index what a deleted turn left
// there (rag.Eraser): its own points, and an episode's before it is
// rebuilt (the old summaries).
type PointEraser interface {
	EraseTurn(ctx context.Context, f memory.Forget) error
	EraseEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error
}

// rebuildBatch bounds the marks one pass reads.
const rebuildBatch = 50

// Rebuild works off the marks deleted messages left (see above) for every
// chat it finds them in, and reports how many chats it finished. A chat
// whose lease another worker holds is left to it; the errors of the others
// are returned joined. Without Forget it does nothing.
func (w *Worker) Rebuild(ctx context.Context) (int, error) {
	if w.Forget == nil {
		return 0, nil
	}
	w.init()
	keys, forgets, err := w.rebuildWork(ctx)
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for _, k := range keys {
		err := w.withLease(ctx, k, func(ctx context.Context) error { return w.rebuildLeased(ctx, k, forgets[k]) })
		switch {
		case ctx.Err() != nil:
			return done, errors.Join(errs...)
		case errors.Is(err, ErrLeaseHeld), errors.Is(err, memory.ErrNotFound):
		case err != nil:
			errs = append(errs, fmt.Errorf("rebuild %s/%s: %w", k.Tenant, k.ChatID, err))
		default:
			done++
		}
	}
	return done, errors.Join(errs...)
}

// rebuildWork lists the chats holding marks, with their Forget rows. A
// dirty summary is a mark of its own: an extension over a turn deleted
// before the summariser read it marks the summary dirty too (the store
// cannot tell when the turn went), with no episode or Forget row behind
// it, and the chat may have nothing left to summarise.
func (w *Worker) rebuildWork(ctx context.Context) ([]memory.ChatKey, map[memory.ChatKey][]memory.Forget, error) {
	eps, err := w.Forget.EpisodesToRebuild(ctx, rebuildBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: episodes to rebuild: %w", err)
	}
	fs, err := w.Forget.PendingForgets(ctx, rebuildBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: pending forgets: %w", err)
	}
	// No backlog reaches MaxInt64: only the dirty chats are listed.
	dirty, err := w.Store.ListSummaryWork(ctx, math.MaxInt64, rebuildBatch)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: dirty summaries: %w", err)
	}
	var keys []memory.ChatKey
	forgets := map[memory.ChatKey][]memory.Forget{}
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

// withLease runs fn under the chat's summary lease, renewed while it runs
// (ErrLeaseHeld when another job holds it).
func (w *Worker) withLease(ctx context.Context, key memory.ChatKey, fn func(context.Context) error) error {
	lease, err := memory.TakeLease(ctx, w.Store, key, memory.LeaseSummary, w.Owner, w.Lease)
	if err != nil {
		return fmt.Errorf("worker: lease: %w", err)
	}
	if lease == nil {
		return ErrLeaseHeld
	}
	defer w.startJob(key)()
	defer func() {
		if err := lease.Release(ctx); err != nil {
			w.Logger.Warn("release summary lease", "chat", key.ChatID, "err", err)
		}
	}()
	work, stop := lease.Keep(ctx)
	defer stop()
	return fn(work)
}

// rebuildLeased rebuilds the chat's marked episodes, then its summary when
// dirty, then does its Forget rows. It holds the chat's summary lease.
func (w *Worker) rebuildLeased(ctx context.Context, key memory.ChatKey, forgets []memory.Forget) error {
	chat, err := w.Store.Chat(ctx, key)
	if err != nil {
		return fmt.Errorf("worker: chat: %w", err)
	}
	s := w.settings(chat.Agent)
	w.forgetCaches(key) // they may hold what the deleted turn said
	// The points go first: once the summary is clean, the read path
	// trusts the chat's hits.
	for _, f := range forgets {
		if err := w.eraseTurn(ctx, f); err != nil {
			return err
		}
	}
	if err := w.rebuildEpisodes(ctx, chat, s); err != nil {
		return err
	}
	if chat, err = w.Store.Chat(ctx, key); err != nil {
		return fmt.Errorf("worker: chat: %w", err)
	}
	if chat.SummaryDirty {
		if err := w.rebuildSummary(ctx, chat, s); err != nil {
			return err
		}
	}
	for _, f := range forgets {
		if err := w.forgetTurn(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// rebuildIfDirty rebuilds a dirty chat before an extension continues its
// chain (a summariser that read a turn before it was deleted leaves the
// summary dirty without a Forget row). It holds the chat's lease.
func (w *Worker) rebuildIfDirty(ctx context.Context, key memory.ChatKey) error {
	if w.Forget == nil {
		return nil
	}
	chat, err := w.Store.Chat(ctx, key)
	if err != nil {
		return fmt.Errorf("worker: chat: %w", err)
	}
	if !chat.SummaryDirty {
		return nil
	}
	return w.rebuildLeased(ctx, key, nil)
}

// forgetCaches drops what this process remembers of the chat's summaries.
func (w *Worker) forgetCaches(key memory.ChatKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.bases, key)
	delete(w.tails, key)
}

// rebuildEpisodes summarises again each of the chat's episodes marked for
// rebuild, from its remaining turns.
func (w *Worker) rebuildEpisodes(ctx context.Context, chat memory.Chat, s Settings) error {
	if w.Episodes == nil {
		return nil
	}
	defer w.derived() // rebuilt episodes (and their facts) are indexed again
	eps, err := w.Episodes.Episodes(ctx, chat.Key(), 0, 0)
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
			read, err := w.deletedIn(ctx, chat.Key(), max(ep.FromSeq-1, ep.ToSeq-int64(s.Episodes.Overlap)), ep.ToSeq)
			if err != nil {
				return err
			}
			if read {
				if err := w.rebuildEpisode(ctx, chat, s, eps[i+1]); err != nil {
					return err
				}
			}
		}
		if err := w.rebuildEpisode(ctx, chat, s, ep); err != nil {
			return err
		}
	}
	return nil
}

// deletedIn reports whether a turn in (after, upTo] is a tombstone.
func (w *Worker) deletedIn(ctx context.Context, key memory.ChatKey, after, upTo int64) (bool, error) {
	turns, err := w.readTurns(ctx, key, after, upTo)
	if err != nil {
		return false, err
	}
	return len(alive(turns)) < len(turns), nil
}

// rebuildEpisode writes ep's summaries and facts anew from its turns (the
// tombstones left out), keeping its range; the mark it read clears Rebuild
// unless another turn of it was deleted meanwhile.
func (w *Worker) rebuildEpisode(ctx context.Context, chat memory.Chat, s Settings, ep memory.Episode) error {
	key := chat.Key()
	turns, err := w.readTurns(ctx, key, ep.FromSeq-1, ep.ToSeq)
	if err != nil {
		return err
	}
	ctxTurns, err := w.readTurns(ctx, key, max(0, ep.FromSeq-1-int64(s.Episodes.Overlap)), ep.FromSeq-1)
	if err != nil {
		return err
	}
	fresh := memory.Episode{Short: "", Summary: memory.Summary{CoveredFromSeq: ep.FromSeq, CoveredToSeq: ep.ToSeq},
		Model: w.Fallback.Name(), PromptVersion: w.Fallback.PromptVersion(memory.Prompts{})}
	var res memory.EpisodeResult
	if len(turns) > 0 {
		if fresh, res, err = w.summariseEpisode(ctx, chat, s, ctxTurns, turns); err != nil {
			return err
		}
		w.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("worker: episode rebuild abandoned: %w", err)
	}
	if w.Erase != nil {
		if err := w.Erase.EraseEpisode(ctx, key, ep); err != nil {
			return err
		}
	}
	out := ep
	out.Short, out.Summary, out.Model, out.PromptVersion, out.Facts = fresh.Short, fresh.Summary, fresh.Model, fresh.PromptVersion, res.Facts
	if err := w.Forget.RebuildEpisode(ctx, key, out); err != nil {
		return fmt.Errorf("worker: rebuild episode %d..%d: %w", ep.FromSeq, ep.ToSeq, err)
	}
	w.Logger.Debug("episode rebuilt", "tenant", key.Tenant, "chat", key.ChatID, "from", ep.FromSeq, "to", ep.ToSeq, "calls", res.Calls)
	return nil
}

// eraseTurn deletes the forgotten turn's points.
func (w *Worker) eraseTurn(ctx context.Context, f memory.Forget) error {
	if w.Erase == nil {
		return nil
	}
	return w.Erase.EraseTurn(ctx, f)
}

// forgetTurn removes the profile items sourced from the forgotten turn
// (its points are gone already), then drops the Forget row.
func (w *Worker) forgetTurn(ctx context.Context, f memory.Forget) error {
	if w.Profiles != nil && f.UserID != "" {
		if err := w.forgetInProfile(ctx, f); err != nil {
			return err
		}
	}
	if err := w.Forget.ForgetDone(ctx, f.Chat, f.Seq); err != nil {
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
func (w *Worker) forgetInProfile(ctx context.Context, f memory.Forget) error {
	chats := []string{f.Chat.ChatID}
	for attempt := 0; ; attempt++ {
		st, v, err := w.Profiles.Profile(ctx, f.Chat.Tenant, f.UserID)
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
		err = w.Profiles.SaveProfile(ctx, f.Chat.Tenant, f.UserID, st, v)
		if err == nil {
			chats = append(chats, memory.SourceChats(gone)...)
			break
		}
		if !errors.Is(err, memory.ErrConflict) || attempt == 5 {
			return fmt.Errorf("worker: save profile: %w", err)
		}
	}
	return remerge(ctx, w.Profiles, f.Chat.Tenant, chats)
}

// remerge makes the chats' summaries profile work again (each once).
func remerge(ctx context.Context, ps memory.ProfileStore, tenant string, chats []string) error {
	slices.Sort(chats)
	for _, c := range slices.Compact(chats) {
		if err := ps.RemergeProfile(ctx, memory.ChatKey{Tenant: tenant, ChatID: c}); err != nil {
			return fmt.Errorf("worker: remerge profile: %w", err)
		}
	}
	return nil
}

// alive leaves the tombstones out.
func alive(turns []memory.Message) []memory.Message {
	out := make([]memory.Message, 0, len(turns))
	for _, t := range turns {
		if !t.Deleted {
			out = append(out, t)
		}
	}
	return out
}
