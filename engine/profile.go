package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// Profiles are the users' cross-chat profiles (memory.ProfileStore).
type Profiles interface {
	Profile(ctx context.Context, tenant, userID string) (memory.ProfileState, int64, error)
	ProfileVersion(ctx context.Context, tenant, userID string) (int64, error)
	SaveProfile(ctx context.Context, tenant, userID string, st memory.ProfileState, expect int64) error
	DeleteProfile(ctx context.Context, tenant, userID string) error
	// Done with MergeProfile marks, ToSeq 0, makes chats' summaries
	// profile work again (memory.Backlogs).
	Done(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error)
}

// titleProfile heads the user's profile, first in the summary section.
const titleProfile = "## About the user (across chats)"

// profileStage is the user's profile the packer may show at the start of
// the summary section: never for a chat without a user, never another
// user's, and without what only this chat said (its own summary says it).
func (s *Service) profileStage(ctx context.Context, p *plan, res *ContextResult) (*memory.Profile, error) {
	if !p.policy.UserProfile || p.chat.UserID == "" || p.strategy == StrategyNone {
		return nil, nil
	}
	ctx, span := s.stage(ctx, spanProfile, p)
	defer span.End()
	// Fallbacks the profiler took for this user's profile.
	res.degrade(s.jobs.profileDegraded(p.chat.Tenant, p.chat.UserID)...)
	pr, err := s.cache.profiles.get(ctx, s.roles.profiles, p.chat.Tenant, p.chat.UserID, p.chat.ProfileVersion)
	if err != nil {
		return nil, storeErr("read profile", err)
	}
	view := pr.ForChat(p.chat.ID)
	if view.IsEmpty() {
		return nil, nil
	}
	view.Normalize()
	return &view, nil
}

// RenderProfile renders a profile as compact text, lists most recently
// confirmed first.
func RenderProfile(pr memory.Profile) string {
	var b strings.Builder
	list := func(label string, items []memory.ProfileItem) {
		if len(items) == 0 {
			return
		}
		parts := make([]string, 0, len(items))
		for _, it := range items {
			t := it.Text
			if it.Name != "" {
				t = it.Name
				if it.Type != "" {
					t += " (" + it.Type + ")"
				}
				if it.Details != "" {
					t += ": " + it.Details
				}
			}
			parts = append(parts, t)
		}
		fmt.Fprintf(&b, "%s: %s\n", label, strings.Join(parts, "; "))
	}
	list("Preferences", pr.UserPreferences)
	list("People, places and things", pr.Entities)
	list("Recurring topics", pr.Topics)
	list("Open questions", pr.OpenQuestions)
	return strings.TrimRight(b.String(), "\n")
}

// fitProfile trims a profile until its rendering fits maxTokens, dropping
// the least recently confirmed item of the longest list first (the caps'
// order).
func fitProfile(pr memory.Profile, maxTokens int, tok tokens.Counter) (memory.Profile, string) {
	if maxTokens <= 0 {
		return pr, ""
	}
	t := pr
	lists := []*[]memory.ProfileItem{&t.UserPreferences, &t.Entities, &t.Topics, &t.OpenQuestions}
	for _, l := range lists {
		*l = append([]memory.ProfileItem(nil), (*l)...)
	}
	for text := RenderProfile(t); ; text = RenderProfile(t) {
		if text == "" || tok.Count(text) <= maxTokens {
			t.Normalize()
			return t, text
		}
		longest := lists[0]
		for _, l := range lists[1:] {
			if len(*l) > len(*longest) {
				longest = l
			}
		}
		*longest = (*longest)[:len(*longest)-1]
	}
}

// packProfile takes the user's profile first in the summary's share: the
// two share its room, the profile trimmed by the caps' order.
func (p *packer) packProfile() {
	if p.in.Profile == nil || p.in.Profile.IsEmpty() {
		return
	}
	capTokens := min(int(float64(p.in.Budget)*p.sh.summary)/2, p.remaining)
	pr, text := fitProfile(*p.in.Profile, capTokens-p.titleCost(titleProfile), p.tok)
	if text != "" && p.spend(p.tok.Count(text)+p.titleCost(titleProfile)) {
		p.shown.profileText, p.shown.profile = text, &pr
	}
}

// UserProfile is the user's profile; not_found when the tenant has no chat
// of that user.
func (s *Service) UserProfile(ctx context.Context, tenant, userID string) (*memory.Profile, error) {
	if err := ValidateID("user_id", userID, true); err != nil {
		return nil, err
	}
	if err := s.userExists(ctx, tenant, userID); err != nil {
		return nil, err
	}
	st, _, err := s.roles.profiles.Profile(ctx, tenant, userID)
	if err != nil {
		return nil, storeErr("read profile", err)
	}
	pr := st.Profile
	pr.UserID = userID
	pr.Normalize()
	return &pr, nil
}

// ForgetProfileItem forgets one item: it is gone, and the chats it came
// from never derive it again (a newer chat that states it brings it back).
func (s *Service) ForgetProfileItem(ctx context.Context, tenant, userID, itemID string) error {
	if err := ValidateID("user_id", userID, true); err != nil {
		return err
	}
	if err := ValidateID("item_id", itemID, true); err != nil {
		return err
	}
	if err := s.userExists(ctx, tenant, userID); err != nil {
		return err
	}
	return s.updateProfile(ctx, tenant, userID, func(st *memory.ProfileState) error {
		if !st.Forget(itemID) {
			return notFound("profile item")
		}
		return nil
	})
}

func (s *Service) userExists(ctx context.Context, tenant, userID string) error {
	ids, err := memory.ChatsOfUser(ctx, s.store, tenant, userID)
	if err != nil {
		return storeErr("list chats", err)
	}
	if len(ids) == 0 {
		return notFound("user")
	}
	return nil
}

// forgetChatInProfile drops an erased chat from its user's profile: the
// items only it stated go with it.
func (s *Service) forgetChatInProfile(ctx context.Context, chat memory.Chat) error {
	if chat.UserID == "" {
		return nil
	}
	return s.updateProfile(ctx, chat.Tenant, chat.UserID, func(st *memory.ProfileState) error {
		st.WithoutChat(chat.ID)
		return nil
	})
}

// updateProfile applies change with compare-and-swap, retrying when the
// profiler wrote in between.
func (s *Service) updateProfile(ctx context.Context, tenant, userID string, change func(*memory.ProfileState) error) error {
	for attempt := 0; ; attempt++ {
		st, v, err := s.roles.profiles.Profile(ctx, tenant, userID)
		if err != nil {
			return storeErr("read profile", err)
		}
		if v == 0 {
			return change(&st) // nothing stored: nothing to change (or not found)
		}
		if err := change(&st); err != nil {
			return err
		}
		err = s.roles.profiles.SaveProfile(ctx, tenant, userID, st, v)
		if err == nil || !errors.Is(err, memory.ErrConflict) || attempt == 3 {
			if err != nil {
				return storeErr("save profile", err)
			}
			return nil
		}
	}
}

// profileCache keeps decoded profiles, valid while the stored version is
// the one they were read at (a cheap read every request makes anyway), so
// a profile is decoded once per change, on every replica.
type profileCache struct {
	mu sync.Mutex
	m  map[[2]string]cachedProfile
}

type cachedProfile struct {
	version int64
	p       memory.Profile
}

// profileCacheUsers bounds the cache; past it, it starts over.
const profileCacheUsers = 4096

// get returns the user's profile (read-only: callers copy before changing).
// seen is the profile's version as read with the chat row (0: not known
// there); a cached profile of that version needs no other read.
func (c *profileCache) get(ctx context.Context, ps Profiles, tenant, userID string, seen int64) (memory.Profile, error) {
	k := [2]string{tenant, userID}
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if ok && seen > 0 && e.version == seen {
		return e.p, nil
	}
	v, err := ps.ProfileVersion(ctx, tenant, userID)
	if err != nil || v == 0 {
		return memory.Profile{}, err
	}
	if ok && e.version == v {
		return e.p, nil
	}
	st, v, err := ps.Profile(ctx, tenant, userID)
	if err != nil {
		return memory.Profile{}, err
	}
	c.mu.Lock()
	if len(c.m) >= profileCacheUsers {
		c.m = map[[2]string]cachedProfile{}
	}
	c.m[k] = cachedProfile{v, st.Profile}
	c.mu.Unlock()
	return st.Profile, nil
}
