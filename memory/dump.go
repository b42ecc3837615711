package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Dump record types (the "type" of a dump line).
const (
	DumpChat          = "chat"
	DumpMessage       = "message"
	DumpSummaryRecord = "summary_record"
	DumpEpisode       = "episode"
	DumpFact          = "fact"
	DumpProfile       = "profile"
)

// DumpRecord is one line of a dump (JSON Lines): {"type", "tenant", then
// the object's fields as the API shows them}. Messages and summary records
// carry "chat_id" beside their fields; chats, episodes and facts have
// their own. Exactly the pointer matching Type is set.
type DumpRecord struct {
	Type   string
	Tenant string
	// ChatID names the chat of every type but profile.
	ChatID  string
	Chat    *Chat
	Message *Message
	Summary *SummaryRecord
	Episode *Episode
	Fact    *Fact
	// Profile is the user's profile with what was forgotten (so that an
	// import never derives a forgotten item again).
	Profile *ProfileState
}

// DumpScope says what a dump holds: one chat (ChatID), every chat of a
// user and the user's profile (UserID), or, with neither, every chat and
// profile of the tenant.
type DumpScope struct {
	Tenant string
	ChatID string
	UserID string
}

// Dumper exports and imports a store's contents (the dump format).
// Implementations: store/sqlite, store/postgres; both pass
// store/storetest.
type Dumper interface {
	// Dump emits the scope's records: per chat, the chat, its messages
	// (tombstones included), summary records (root first), episodes and
	// facts (superseded included), in seq order; then the profiles. Every
	// record is of scope.Tenant. ErrNotFound for an unknown chat, or a
	// user without chats or profile. An emit error stops the dump and is
	// returned.
	Dump(ctx context.Context, scope DumpScope, emit func(DumpRecord) error) error
	// Load stores one record as it is (ids, seqs, times, metadata kept),
	// in one transaction, in the record's tenant. It is idempotent: a
	// record whose id the store holds (a chat by chat id, a profile item
	// by item id) is left as stored and reports added false. Records must
	// come in dump order: ErrNotFound when a record's chat is not there
	// yet; ErrConflict when the record contradicts the stored chat (its
	// seq is taken by another message, another user owns the chat, a
	// summary record does not continue the chain, an episode overlaps
	// another, a range passes last_seq). Loaded messages, episodes and
	// facts are unindexed: the indexer rebuilds the index from the store.
	Load(ctx context.Context, rec DumpRecord) (added bool, err error)
}

// The wire shapes of the record types. Type and Tenant sit at depth 0, so
// they dominate the embedded struct's fields of the same name (Chat's
// "tenant").
type (
	dumpChat struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
		Chat
	}
	dumpMessage struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
		ChatID string `json:"chat_id"`
		Message
	}
	dumpSummary struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
		ChatID string `json:"chat_id"`
		SummaryRecord
	}
	dumpEpisode struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
		Episode
	}
	dumpFact struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
		Fact
	}
	dumpProfile struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
		Profile
		Forgotten map[string][]string `json:"forgotten,omitempty"`
	}
)

// MarshalJSON writes the record's line (without the newline).
func (r DumpRecord) MarshalJSON() ([]byte, error) {
	switch {
	case r.Type == DumpChat && r.Chat != nil:
		return json.Marshal(dumpChat{r.Type, r.Tenant, *r.Chat})
	case r.Type == DumpMessage && r.Message != nil:
		m := *r.Message
		if m.Metadata == nil { // as the listing shows it
			m.Metadata = map[string]any{}
		}
		return json.Marshal(dumpMessage{r.Type, r.Tenant, r.ChatID, m})
	case r.Type == DumpSummaryRecord && r.Summary != nil:
		return json.Marshal(dumpSummary{r.Type, r.Tenant, r.ChatID, *r.Summary})
	case r.Type == DumpEpisode && r.Episode != nil:
		return json.Marshal(dumpEpisode{r.Type, r.Tenant, *r.Episode})
	case r.Type == DumpFact && r.Fact != nil:
		return withTypeAndTenant(r.Type, r.Tenant, *r.Fact) // a dumpFact would take Fact's MarshalJSON for its own
	case r.Type == DumpProfile && r.Profile != nil:
		return json.Marshal(dumpProfile{r.Type, r.Tenant, r.Profile.Profile, r.Profile.Forgotten})
	}
	return nil, fmt.Errorf("dump record of type %q without its object", r.Type)
}

// withTypeAndTenant is v's JSON object with "type" and "tenant" first.
func withTypeAndTenant(typ, tenant string, v any) ([]byte, error) {
	head, err := json.Marshal(struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
	}{typ, tenant})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("dump %s: not a JSON object: %.40s", typ, body)
	}
	if len(body) == 2 {
		return head, nil
	}
	return append(append(head[:len(head)-1], ','), body[1:]...), nil
}

// ParseDumpLine decodes and checks one dump line. Unknown fields are an
// error (an import must not drop what it does not understand), as are a
// missing tenant, chat id, id or seq.
func ParseDumpLine(line []byte) (DumpRecord, error) {
	var head struct {
		Type   string `json:"type"`
		Tenant string `json:"tenant"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return DumpRecord{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if head.Tenant == "" {
		return DumpRecord{}, errors.New(`"tenant" is missing`)
	}
	r := DumpRecord{Type: head.Type, Tenant: head.Tenant}
	var err error
	switch head.Type {
	case DumpChat:
		var d dumpChat
		err = strict(line, &d)
		d.Chat.Tenant = head.Tenant
		r.Chat, r.ChatID = &d.Chat, d.Chat.ID
	case DumpMessage:
		var d dumpMessage
		err = strict(line, &d)
		if len(d.Message.Metadata) == 0 { // null and {} are both none, stored as the API stores none
			d.Message.Metadata = nil
		}
		r.Message, r.ChatID = &d.Message, d.ChatID
	case DumpSummaryRecord:
		var d dumpSummary
		err = strict(line, &d)
		r.Summary, r.ChatID = &d.SummaryRecord, d.ChatID
	case DumpEpisode:
		var d dumpEpisode
		err = strict(line, &d)
		r.Episode, r.ChatID = &d.Episode, d.Episode.ChatID
	case DumpFact:
		var d dumpFact
		err = strict(line, &d)
		r.Fact, r.ChatID = &d.Fact, d.Fact.ChatID
	case DumpProfile:
		var d dumpProfile
		err = strict(line, &d)
		r.Profile = &ProfileState{Profile: d.Profile, Forgotten: d.Forgotten}
	default:
		return DumpRecord{}, fmt.Errorf("unknown type %q (want chat, message, summary_record, episode, fact or profile)", head.Type)
	}
	if err != nil {
		return DumpRecord{}, fmt.Errorf("%s: %w", head.Type, err)
	}
	if err := r.check(); err != nil {
		return DumpRecord{}, fmt.Errorf("%s: %w", head.Type, err)
	}
	return r, nil
}

func strict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	dec.UseNumber() // metadata numbers as written: 2^53+1 stays itself
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// check rejects records missing what Load needs to keep them as they were.
func (r DumpRecord) check() error {
	if r.Type != DumpProfile && r.ChatID == "" {
		return errors.New(`"chat_id" is missing`)
	}
	// Ids as the API takes them: an import must not store what the API
	// could then never name (read, export or erase).
	if err := CheckName(r.Tenant); err != nil {
		return fmt.Errorf(`"tenant" %w`, err)
	}
	if err := checkIDs(r); err != nil {
		return err
	}
	switch r.Type {
	case DumpMessage:
		m := r.Message
		switch {
		case m.ID == "":
			return errors.New(`"id" is missing`)
		case m.Seq < 1:
			return errors.New(`"seq" must be ≥ 1`)
		case !m.Role.Valid():
			return fmt.Errorf("role %q is not one of user, assistant, system, tool", m.Role)
		}
	case DumpSummaryRecord:
		if r.Summary.ID == "" || r.Summary.Depth < 0 {
			return errors.New(`"id" is missing or "depth" is negative`)
		}
	case DumpEpisode:
		if e := r.Episode; e.ID == "" || e.FromSeq < 1 || e.ToSeq < e.FromSeq {
			return errors.New(`"id" is missing or from_seq..to_seq is not a range from 1`)
		}
	case DumpFact:
		if r.Fact.ID == "" || len(r.Fact.Seqs) == 0 {
			return errors.New(`"id" or "seqs" is missing`)
		}
	case DumpProfile:
		if r.Profile.Profile.UserID == "" {
			return errors.New(`"user_id" is missing`)
		}
	}
	return nil
}

// checkIDs checks the caller-given ids of a record: its chat's, and a
// chat's user and agent, a message's, a profile's user.
func checkIDs(r DumpRecord) error {
	ids := map[string]string{"chat_id": r.ChatID}
	switch {
	case r.Chat != nil:
		ids["user_id"], ids["agent"] = r.Chat.UserID, r.Chat.Agent
	case r.Message != nil:
		ids["id"] = r.Message.ID
	case r.Profile != nil:
		ids["user_id"] = r.Profile.Profile.UserID
	}
	for _, name := range []string{"chat_id", "user_id", "agent", "id"} {
		if v := ids[name]; v != "" {
			if err := CheckID(v); err != nil {
				return fmt.Errorf("%q %w", name, err)
			}
		}
	}
	return nil
}

// DumpSource is what DumpFrom reads.
type DumpSource interface {
	ChatReader
	SummaryChain(ctx context.Context, key ChatKey) ([]SummaryRecord, error)
	EpisodeReader
	Facts(ctx context.Context, key ChatKey, q FactQuery) ([]Fact, error)
	Profile(ctx context.Context, tenant, userID string) (ProfileState, int64, error)
	ChatLister
}

// dumpPage is how many rows DumpFrom reads at once.
const dumpPage = 500

// DumpFrom is Dumper.Dump over the store's read methods, shared by the
// stores. Each chat is dumped as of its first read: rows past its last_seq
// (a concurrent append) are left out, so that the dump loads back.
func DumpFrom(ctx context.Context, src DumpSource, scope DumpScope, emit func(DumpRecord) error) error {
	switch {
	case scope.ChatID != "":
		return dumpChatRecords(ctx, src, ChatKey{Tenant: scope.Tenant, ChatID: scope.ChatID}, emit)
	case scope.UserID != "":
		ids, err := ChatsOfUser(ctx, src, scope.Tenant, scope.UserID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := dumpChatRecords(ctx, src, ChatKey{Tenant: scope.Tenant, ChatID: id}, emit); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		found, err := emitProfile(ctx, src, scope.Tenant, scope.UserID, emit)
		if err == nil && !found && len(ids) == 0 {
			return fmt.Errorf("user %q: %w", scope.UserID, ErrNotFound)
		}
		return err
	}
	users := map[string]bool{}
	for after := ""; ; {
		rows, err := src.ListChats(ctx, ChatQuery{Tenant: scope.Tenant, After: after, Limit: dumpPage})
		if err != nil {
			return err
		}
		for _, c := range rows {
			if err := dumpChatRecords(ctx, src, c.Key(), emit); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			if c.UserID != "" {
				users[c.UserID] = true
			}
		}
		if len(rows) < dumpPage {
			break
		}
		after = rows[len(rows)-1].ID
	}
	for _, u := range slices.Sorted(maps.Keys(users)) {
		if _, err := emitProfile(ctx, src, scope.Tenant, u, emit); err != nil {
			return err
		}
	}
	return nil
}

func emitProfile(ctx context.Context, src DumpSource, tenant, userID string, emit func(DumpRecord) error) (bool, error) {
	st, v, err := src.Profile(ctx, tenant, userID)
	if err != nil || v == 0 {
		return false, err
	}
	st.Profile.UserID = userID
	return true, emit(DumpRecord{Type: DumpProfile, Tenant: tenant, Profile: &st})
}

// dumpChatRecords emits one chat's records, none past its last_seq.
func dumpChatRecords(ctx context.Context, src DumpSource, key ChatKey, emit func(DumpRecord) error) error {
	chat, err := src.Chat(ctx, key)
	if err != nil {
		return err
	}
	rec := func(typ string) DumpRecord { return DumpRecord{Type: typ, Tenant: key.Tenant, ChatID: key.ChatID} }
	r := rec(DumpChat)
	r.Chat = &chat
	if err := emit(r); err != nil {
		return err
	}
	if err := dumpMessages(ctx, src, chat, func(m Message) error {
		r := rec(DumpMessage)
		r.Message = &m
		return emit(r)
	}); err != nil {
		return err
	}
	chain, err := src.SummaryChain(ctx, key)
	if err != nil {
		return err
	}
	slices.Reverse(chain) // root first: each record's parent is loaded before it
	for i := range chain {
		if chain[i].CoveredToSeq > chat.LastSeq {
			break
		}
		r := rec(DumpSummaryRecord)
		r.Summary = &chain[i]
		if err := emit(r); err != nil {
			return err
		}
	}
	eps, err := src.Episodes(ctx, key, EpisodeQuery{})
	if err != nil {
		return err
	}
	for i := range eps {
		if eps[i].ToSeq > chat.LastSeq {
			break
		}
		r := rec(DumpEpisode)
		r.Episode = &eps[i]
		if err := emit(r); err != nil {
			return err
		}
	}
	facts, err := src.Facts(ctx, key, FactQuery{IncludeSuperseded: true})
	if err != nil {
		return err
	}
	for i := range facts {
		if f := facts[i]; f.Seqs[len(f.Seqs)-1] > chat.LastSeq {
			continue
		}
		r := rec(DumpFact)
		r.Fact = &facts[i]
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

func dumpMessages(ctx context.Context, src DumpSource, chat Chat, emit func(Message) error) error {
	for after := int64(0); after < chat.LastSeq; {
		msgs, err := src.Messages(ctx, chat.Key(), after, dumpPage)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		for _, m := range msgs {
			if m.Seq > chat.LastSeq {
				return nil
			}
			if err := emit(m); err != nil {
				return err
			}
		}
		after = msgs[len(msgs)-1].Seq
	}
	return nil
}

// LoadProfile is Dumper.Load of a profile record, shared by the stores: a
// user without a profile gets st; otherwise only the items whose ids the
// stored profile lacks are added (and what st forgot is forgotten too),
// with compare-and-swap retries. It reports whether anything changed.
func LoadProfile(ctx context.Context, ps ProfileStore, tenant string, st ProfileState) (bool, error) {
	userID := st.Profile.UserID
	for attempt := 0; ; attempt++ {
		have, v, err := ps.Profile(ctx, tenant, userID)
		if err != nil {
			return false, err
		}
		merged, changed := mergeProfileStates(have, st, v == 0)
		if !changed {
			return false, nil
		}
		err = ps.SaveProfile(ctx, tenant, userID, merged, v)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == 4 {
			return false, err
		}
	}
}

// mergeProfileStates adds to have the items of add whose ids it lacks and
// add's forgotten chats.
func mergeProfileStates(have, add ProfileState, empty bool) (ProfileState, bool) {
	if empty {
		return add, true
	}
	changed := false
	hl, al := have.lists(), add.lists()
	for i := range hl {
		for _, it := range *al[i] {
			if !slices.ContainsFunc(*hl[i], func(h ProfileItem) bool { return h.ID == it.ID }) {
				*hl[i] = append(*hl[i], it)
				changed = true
			}
		}
		sort.SliceStable(*hl[i], func(a, b int) bool { return (*hl[i])[a].Confirmed.After((*hl[i])[b].Confirmed) })
	}
	for id, chats := range add.Forgotten {
		for _, c := range chats {
			if !slices.Contains(have.Forgotten[id], c) {
				if have.Forgotten == nil {
					have.Forgotten = map[string][]string{}
				}
				have.Forgotten[id] = append(have.Forgotten[id], c)
				changed = true
			}
		}
	}
	return have, changed
}
