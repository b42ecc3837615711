package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"
)

// Profile is what is known about a user across all of their chats in a
// tenant. Every item names the chats and turns it came from; lists are
// ordered most recently confirmed first.
type Profile struct {
	UserID          string        `json:"user_id"`
	Entities        []ProfileItem `json:"entities"`
	UserPreferences []ProfileItem `json:"user_preferences"`
	Topics          []ProfileItem `json:"topics"`
	OpenQuestions   []ProfileItem `json:"open_questions"`
	Model           string        `json:"model"`
	UpdatedAt       time.Time     `json:"updated_at"`
}

// ProfileItem is one entity (Name, Type, Details) or one text item.
type ProfileItem struct {
	ID      string   `json:"id"`
	Name    string   `json:"name,omitempty"`
	Type    string   `json:"type,omitempty"`
	Details string   `json:"details,omitempty"`
	Text    string   `json:"text,omitempty"`
	Sources []Source `json:"sources"`
	// Confirmed is when a source last stated the item: the caps keep the
	// most recently confirmed items.
	Confirmed time.Time `json:"confirmed"`
}

// Source is a stretch of a chat an item came from.
type Source struct {
	ChatID  string `json:"chat_id"`
	FromSeq int64  `json:"from_seq"`
	ToSeq   int64  `json:"to_seq"`
}

// ProfileState is a profile with what was forgotten: item id → the chats
// it must not be derived from again.
type ProfileState struct {
	Profile   Profile             `json:"profile"`
	Forgotten map[string][]string `json:"forgotten,omitempty"`
}

// ErrProfileReply: an LLM's reply to a profile merge held no profile.
var ErrProfileReply = errors.New("profile merge: the reply holds no profile")

// ProfileCap caps each of the profile's lists.
const ProfileCap = 30

// ProfileStore keeps each user's profile, versioned for compare-and-swap.
// The durable work of merging chat summaries into it is the MergeProfile
// backlog (Backlogs).
type ProfileStore interface {
	// Profile returns the user's profile state and its version (zero state
	// and 0 when the user has none yet).
	Profile(ctx context.Context, tenant, userID string) (ProfileState, int64, error)
	// ProfileVersion is the version of the user's profile (0: none), a
	// cheap read that validates a cached copy.
	ProfileVersion(ctx context.Context, tenant, userID string) (int64, error)
	// SaveProfile writes st if the version is still expect (ErrConflict
	// otherwise).
	SaveProfile(ctx context.Context, tenant, userID string, st ProfileState, expect int64) error
	// DeleteProfile erases the user's profile.
	DeleteProfile(ctx context.Context, tenant, userID string) error
}

// itemID is stable for the same item: a forgotten item is recognised when
// a summary states it again.
func itemID(kind, key string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + normKey(key)))
	return kind[:1] + hex.EncodeToString(sum[:6])
}

// MergeChat merges a chat's summary (covering from..to) into the state, as
// of now: items the summary states are confirmed now and gain (or extend)
// the chat's source; items forgotten for this chat are not derived again.
// Its cost is that of one summary, not of the user's history.
func MergeChat(st ProfileState, userID, chatID string, s Summary, now time.Time) ProfileState {
	p := st.Profile
	p.UserID = userID
	src := Source{ChatID: chatID, FromSeq: max(1, s.CoveredFromSeq), ToSeq: s.CoveredToSeq}
	merge := func(list []ProfileItem, add []ProfileItem) []ProfileItem {
		for _, a := range add {
			if forgottenFor(st.Forgotten[a.ID], chatID) {
				continue
			}
			list = confirm(list, a, src, now)
		}
		return capItems(list)
	}
	var ents []ProfileItem
	for _, e := range s.Entities {
		ents = append(ents, ProfileItem{ID: itemID("entity", e.Name), Name: e.Name, Type: e.Type, Details: e.Details})
	}
	p.Entities = merge(p.Entities, ents)
	p.UserPreferences = merge(p.UserPreferences, texts("preference", s.UserPreferences))
	p.Topics = merge(p.Topics, texts("topic", s.Topics))
	p.OpenQuestions = merge(p.OpenQuestions, texts("question", s.OpenQuestions))
	if p.Model == "" {
		p.Model = "extractive"
	}
	p.UpdatedAt = now
	st.Profile = p
	return st
}

// MergeFacts merges what facts say about the user — preferences,
// constraints and attributes — into the state as user_preferences, each
// with the turns it came from as its source; items forgotten for this chat
// are not derived again. Facts of other kinds are left to the summary.
func MergeFacts(st ProfileState, userID, chatID string, facts []Fact, now time.Time) ProfileState {
	p := st.Profile
	p.UserID = userID
	for _, f := range facts {
		if (f.Kind != FactPreference && f.Kind != FactAttribute) || len(f.Seqs) == 0 || f.SupersededBy != "" {
			continue
		}
		it := ProfileItem{ID: itemID("preference", f.Text), Text: f.Text}
		if forgottenFor(st.Forgotten[it.ID], chatID) {
			continue
		}
		src := Source{ChatID: chatID, FromSeq: f.Seqs[0], ToSeq: f.Seqs[len(f.Seqs)-1]}
		p.UserPreferences = confirm(p.UserPreferences, it, src, now)
	}
	p.UserPreferences = capItems(p.UserPreferences)
	if p.Model == "" {
		p.Model = "extractive"
	}
	p.UpdatedAt = now
	st.Profile = p
	return st
}

func texts(kind string, items []string) []ProfileItem {
	out := make([]ProfileItem, 0, len(items))
	for _, t := range items {
		if strings.TrimSpace(t) != "" {
			out = append(out, ProfileItem{ID: itemID(kind, t), Text: t})
		}
	}
	return out
}

func forgottenFor(chats []string, chatID string) bool {
	for _, c := range chats {
		if c == chatID {
			return true
		}
	}
	return false
}

// confirm adds item a (or merges it into the item with its id) with src.
func confirm(list []ProfileItem, a ProfileItem, src Source, now time.Time) []ProfileItem {
	for i := range list {
		if list[i].ID != a.ID {
			continue
		}
		it := list[i]
		if a.Name != "" {
			it.Details = mergeDetails(it.Details, a.Details)
			if it.Type == "" || it.Type == EntityTypeName {
				it.Type = a.Type
			}
		}
		it.Sources = withSource(it.Sources, src)
		it.Confirmed = now
		list[i] = it
		return list
	}
	a.Sources, a.Confirmed = []Source{src}, now
	return append(list, a)
}

// withSource extends the chat's source, or adds it.
func withSource(srcs []Source, src Source) []Source {
	out := append([]Source(nil), srcs...)
	for i := range out {
		if out[i].ChatID == src.ChatID {
			out[i].FromSeq, out[i].ToSeq = min(out[i].FromSeq, src.FromSeq), max(out[i].ToSeq, src.ToSeq)
			return out
		}
	}
	return append(out, src)
}

// capItems orders by most recent confirmation and keeps ProfileCap.
func capItems(list []ProfileItem) []ProfileItem {
	sort.SliceStable(list, func(i, j int) bool { return list[i].Confirmed.After(list[j].Confirmed) })
	if len(list) > ProfileCap {
		list = list[:ProfileCap]
	}
	return list
}

// Forget removes the item and remembers the chats it came from, so the
// same sources never derive it again; it reports whether the item existed.
func (st *ProfileState) Forget(id string) bool {
	for _, l := range st.lists() {
		for i, it := range *l {
			if it.ID != id {
				continue
			}
			if st.Forgotten == nil {
				st.Forgotten = map[string][]string{}
			}
			for _, s := range it.Sources {
				st.Forgotten[id] = append(st.Forgotten[id], s.ChatID)
			}
			*l = append((*l)[:i:i], (*l)[i+1:]...)
			return true
		}
	}
	return false
}

// WithoutChat drops the chat from every item's sources, and the items left
// without a source (an erased chat's own items).
func (st *ProfileState) WithoutChat(chatID string) {
	for _, l := range st.lists() {
		kept := (*l)[:0]
		for _, it := range *l {
			var srcs []Source
			for _, s := range it.Sources {
				if s.ChatID != chatID {
					srcs = append(srcs, s)
				}
			}
			if len(srcs) > 0 {
				it.Sources = srcs
				kept = append(kept, it)
			}
		}
		*l = kept
	}
}

// WithoutTurn removes the items one of whose sources is a stretch of the
// chat holding seq (a deleted message may have stated them; whatever else
// the item says cannot be told apart from it) and returns them. They are
// not remembered as forgotten: the summaries of their sources, merged
// again (SourceChats, Backlogs.Done(MergeProfile) with ToSeq 0), state again what they still hold:
// the chat's own once rebuilt without the turn, other chats' as they are.
func (st *ProfileState) WithoutTurn(chatID string, seq int64) []ProfileItem {
	var gone []ProfileItem
	for _, l := range st.lists() {
		kept := (*l)[:0]
		for _, it := range *l {
			if sourcedFrom(it.Sources, chatID, seq) {
				gone = append(gone, it)
				continue
			}
			kept = append(kept, it)
		}
		*l = kept
	}
	return gone
}

// WithoutSources removes the items any of whose sources gone reports
// (an import's items that came from a deleted turn) and returns them.
func (st *ProfileState) WithoutSources(gone func(Source) bool) []ProfileItem {
	var out []ProfileItem
	for _, l := range st.lists() {
		kept := (*l)[:0]
		for _, it := range *l {
			if slices.ContainsFunc(it.Sources, gone) {
				out = append(out, it)
				continue
			}
			kept = append(kept, it)
		}
		*l = kept
	}
	return out
}

// SourceChats are the chats the items came from, each once, in order.
func SourceChats(items []ProfileItem) []string {
	var out []string
	for _, it := range items {
		for _, s := range it.Sources {
			if !slices.Contains(out, s.ChatID) {
				out = append(out, s.ChatID)
			}
		}
	}
	return out
}

// WithoutFacts removes what the chat's facts fs gave the profile (a fact a
// newer one superseded: "lives in Berlin" once "moved to Munich"): their
// items lose the chat's sources at the facts' turns, and an item left
// without a source goes. It reports how many items went.
func (st *ProfileState) WithoutFacts(chatID string, fs []Fact) int {
	n := 0
	for _, f := range fs {
		if len(f.Seqs) == 0 {
			continue
		}
		id := itemID("preference", f.Text)
		kept := st.Profile.UserPreferences[:0]
		for _, it := range st.Profile.UserPreferences {
			if it.ID == id {
				it.Sources = slices.DeleteFunc(slices.Clone(it.Sources), func(s Source) bool {
					return s.ChatID == chatID && s.FromSeq == f.Seqs[0] && s.ToSeq == f.Seqs[len(f.Seqs)-1]
				})
				if len(it.Sources) == 0 {
					n++
					continue
				}
			}
			kept = append(kept, it)
		}
		st.Profile.UserPreferences = kept
	}
	return n
}

func sourcedFrom(srcs []Source, chatID string, seq int64) bool {
	for _, s := range srcs {
		if s.ChatID == chatID && s.FromSeq <= seq && seq <= s.ToSeq {
			return true
		}
	}
	return false
}

func (st *ProfileState) lists() []*[]ProfileItem {
	p := &st.Profile
	return []*[]ProfileItem{&p.Entities, &p.UserPreferences, &p.Topics, &p.OpenQuestions}
}

// ForChat is the profile as a chat's context shows it: without the items
// whose only source is that chat (its own summary already says them).
func (p Profile) ForChat(chatID string) Profile {
	st := ProfileState{Profile: p}
	out := st.lists()
	for _, l := range out {
		kept := make([]ProfileItem, 0, len(*l))
		for _, it := range *l {
			if len(it.Sources) != 1 || it.Sources[0].ChatID != chatID {
				kept = append(kept, it)
			}
		}
		*l = kept
	}
	return st.Profile
}

// Normalize replaces nil lists with empty ones so JSON shows [] not null.
func (p *Profile) Normalize() {
	for _, l := range []*[]ProfileItem{&p.Entities, &p.UserPreferences, &p.Topics, &p.OpenQuestions} {
		if *l == nil {
			*l = []ProfileItem{}
		}
	}
}

// IsEmpty reports whether the profile holds no item.
func (p Profile) IsEmpty() bool {
	return len(p.Entities)+len(p.UserPreferences)+len(p.Topics)+len(p.OpenQuestions) == 0
}

// ApplyMerged takes an LLM's merged profile (its lists as a Summary) for a
// chat's summary: items it keeps keep their sources (and gain the chat's
// when the chat's summary states them), items it adds come from the chat,
// items it drops are gone. Items forgotten for this chat are not added.
func ApplyMerged(st ProfileState, userID, chatID string, chat, merged Summary, now time.Time) ProfileState {
	src := Source{ChatID: chatID, FromSeq: max(1, chat.CoveredFromSeq), ToSeq: chat.CoveredToSeq}
	stated := map[string]bool{}
	for _, e := range chat.Entities {
		stated[itemID("entity", e.Name)] = true
	}
	for kind, l := range map[string][]string{"preference": chat.UserPreferences, "topic": chat.Topics, "question": chat.OpenQuestions} {
		for _, t := range l {
			stated[itemID(kind, t)] = true
		}
	}
	apply := func(old, add []ProfileItem) []ProfileItem {
		byID := map[string]ProfileItem{}
		for _, it := range old {
			byID[it.ID] = it
		}
		var out []ProfileItem
		for _, a := range add {
			it, ok := byID[a.ID]
			switch {
			case ok && stated[a.ID]:
				it.Sources, it.Confirmed = withSource(it.Sources, src), now
			case !ok && forgottenFor(st.Forgotten[a.ID], chatID):
				continue
			case !ok:
				it = a
				it.Sources, it.Confirmed = []Source{src}, now
			}
			if a.Name != "" {
				it.Name, it.Type, it.Details = a.Name, a.Type, a.Details
			}
			out = append(out, it)
		}
		return capItems(out)
	}
	p := st.Profile
	p.UserID = userID
	var ents []ProfileItem
	for _, e := range merged.Entities {
		ents = append(ents, ProfileItem{ID: itemID("entity", e.Name), Name: e.Name, Type: e.Type, Details: e.Details})
	}
	p.Entities = apply(p.Entities, ents)
	p.UserPreferences = apply(p.UserPreferences, texts("preference", merged.UserPreferences))
	p.Topics = apply(p.Topics, texts("topic", merged.Topics))
	p.OpenQuestions = apply(p.OpenQuestions, texts("question", merged.OpenQuestions))
	p.UpdatedAt = now
	st.Profile = p
	return st
}
