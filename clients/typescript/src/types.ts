// The wire types of the contextd HTTP API (docs/api.md). Answers are
// returned as the server sends them, so their fields are snake_case.

export type Role = "user" | "assistant" | "system" | "tool";
export type Strategy = "none" | "running_summary" | "rag_augmented";
export type Kind = "turn" | "episode" | "fact";
export type IncludePart = "context" | "messages" | "sections";

/** A turn to store. `id` makes the append idempotent. */
export interface InputMessage {
  id?: string;
  role: Role;
  name?: string;
  content: string;
  /** RFC 3339; default: now. */
  created_at?: string;
  metadata?: Record<string, unknown>;
}

export interface AppendResult {
  chat_id: string;
  appended: number;
  duplicates: number;
  last_seq: number;
  messages: { id: string; seq: number }[];
}

/** A stored turn. */
export interface LiveMessage {
  id: string;
  seq: number;
  role: Role;
  name: string;
  content: string;
  created_at: string;
  metadata: Record<string, unknown>;
  deleted?: false;
}

/** The tombstone of a turn deleted on its own: its id, seq, role and time, nothing else. */
export interface DeletedMessage {
  id: string;
  seq: number;
  role: Role;
  created_at: string;
  deleted: true;
}

/** A stored turn, or the tombstone of a deleted one (`deleted: true`). */
export type StoredMessage = LiveMessage | DeletedMessage;

export interface MessagesPage {
  messages: StoredMessage[];
  next_after_seq: number;
}

/** An OpenAI-style message of the context answer. */
export interface ChatMessage {
  role: Role;
  content: string;
  name?: string;
}

export interface Summary {
  topics: string[];
  entities: { name: string; type: string; details: string }[];
  actions_taken: string[];
  decisions: string[];
  open_questions: string[];
  user_preferences: string[];
  narrative: string;
  covered_from_seq: number;
  covered_to_seq: number;
  stale: boolean;
  model: string;
  prompt_version: string;
  updated_at: string;
}

export interface SummaryRecord extends Summary {
  id: string;
  parent_id: string | null;
  depth: number;
  from_seq: number;
  to_seq: number;
  token_count: number;
  created_at: string;
}

export interface Episode {
  id: string;
  chat_id: string;
  from_seq: number;
  to_seq: number;
  turns: number;
  started_at: string;
  ended_at: string;
  short: string;
  summary: Summary;
  model: string;
  prompt_version: string;
  created_at: string;
}

export interface Source {
  chat_id: string;
  from_seq: number;
  to_seq: number;
}

export interface ProfileItem {
  id: string;
  text: string;
  sources: Source[];
  confirmed: string;
}

export interface Profile {
  user_id: string;
  entities: { id: string; name: string; type: string; details: string; sources: Source[] }[];
  user_preferences: ProfileItem[];
  topics: ProfileItem[];
  open_questions: ProfileItem[];
  model: string;
  updated_at: string;
}

export interface Fact {
  id: string;
  chat_id: string;
  text: string;
  seqs: number[];
  valid_at: string;
  kind: "preference" | "plan" | "decision" | "event" | "attribute" | "other";
  source: "llm" | "extractive";
  superseded_by: string | null;
  created_at: string;
}

export interface Usage {
  budget_tokens: number;
  total_tokens: number;
  rag_tokens: number;
  episode_tokens: number;
  fact_tokens: number;
  profile_tokens: number;
  summary_tokens: number;
  recent_tokens: number;
  summarised_turns: number;
  dropped_turns: number;
  dropped_seqs?: number[];
  filtered_turns: number;
}

export interface Sections {
  rag: { seq: number; role: Role; name?: string; content: string; score: number; created_at: string }[];
  episodes: { id: string; from_seq: number; to_seq: number; started_at: string; ended_at: string; short: string; score: number }[];
  facts: { id: string; text: string; seqs: number[]; valid_at: string; score: number }[];
  profile: Profile | null;
  summary: Summary | null;
  recent: { seq: number; role: Role; name: string; content: string; created_at: string }[];
}

/** The answer of POST /v1/context; parts left out by `include` are absent. */
export interface ContextResult {
  chat_id: string;
  agent: string;
  strategy: Strategy;
  context?: string;
  messages?: ChatMessage[];
  sections?: Sections;
  usage: Usage;
  degraded: string[];
}

export interface SearchHit {
  kind: Kind;
  chat_id: string;
  seq: number;
  role: Role | "";
  content: string;
  score: number;
  created_at: string;
  episode_id?: string;
  from_seq?: number;
  to_seq?: number;
  started_at?: string;
  ended_at?: string;
  fact_id?: string;
  seqs?: number[];
  valid_at?: string;
}

/**
 * POST /v1/search's hits, best first: an array that also says what the
 * answer lacks. `degraded` (not enumerable: the array serialises and
 * compares as its hits) names every fallback the search took, e.g.
 * `index_behind` (the chat's turns, episodes or facts were not all indexed,
 * or its turns' facts not all drawn, within the search's wait); it is empty
 * when none was.
 */
export type SearchHits = SearchHit[] & { readonly degraded: string[] };

export interface SummaryAnswer {
  /** The summary /v1/context uses when the chat does not fit whole. */
  summary: Summary | null;
  /** The stored records, head first (never the preview). */
  chain: SummaryRecord[];
  episodes: Episode[];
  /**
   * `summary` is the extension the worker is about to store, computed for
   * this answer as for a context's (the stored summary lags); false: the
   * stored head.
   */
  preview: boolean;
}

export interface EpisodesPage {
  episodes: Episode[];
  next_after_seq: number;
}

export interface FactsPage {
  facts: Fact[];
  next_after_seq: number;
}

/** One line of an export: `type` and `tenant`, then the object's fields. */
export interface DumpRecord {
  type: "chat" | "message" | "summary_record" | "episode" | "fact" | "profile";
  tenant: string;
  [field: string]: unknown;
}

/** GET /readyz: each backend's state. */
export interface Readiness {
  storage: string;
  vector: string;
  embedder: string;
  llm: string;
  [field: string]: unknown;
}
