package loadgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Corpus generates chat turns deterministically from a seed: a turn's text
// is a pure function of (seed, chat, turn), so the load generator never
// keeps the corpus in memory (200k turns would inflate the RSS it reports)
// and can rebuild any turn to draw a query from it.
type Corpus struct {
	Seed int64
	// Long makes turns of 100-1,500 characters (uniform; about 800 on
	// average, 15-250 words) instead of 10-60 words: the lengths of a
	// chat with an assistant that answers in paragraphs.
	Long bool
}

// Long turns' length bounds in bytes. A turn stops at its first word
// that reaches its drawn length, so the drawn length stays 14 below the
// maximum: the longest word and its space and stop fit.
const (
	longMinChars = 100
	longMaxChars = 1500
)

// Word pools. Each chat draws a few topics, so chats differ and retrieval
// has something to discriminate on; entities and ticket ids give the
// sparse (BM25-like) side rare tokens to match.
var (
	functionWords = strings.Fields(`the a an and or but so of to in on at for with from by about as
		is was are were be been it this that these those we you they i he she our your their my
		not no can could should would will might must have has had do did does if then than when
		while because after before again also just still only very really maybe`)

	generalWords = strings.Fields(`check update plan issue problem result change version release
		customer team meeting schedule report number time week month morning afternoon today
		tomorrow yesterday deadline budget cost price order request response error warning log
		status message email call note list draft review approve reject confirm cancel move send
		receive share document file folder page section table chart summary detail question answer
		idea option choice decision reason risk estimate target goal step task priority owner
		account user profile setting permission access password login backup restore migrate
		deploy build test fix patch bug feature design prototype feedback survey interview
		contract invoice payment refund shipment delivery warehouse stock supplier vendor partner
		office remote travel flight hotel ticket booking room dinner lunch coffee break holiday
		weekend quarter forecast revenue growth churn metric dashboard alert incident outage
		latency capacity cluster server database cache queue worker service endpoint client
		library package dependency upgrade downgrade rollback config secret token key region`)

	topics = [][]string{
		strings.Fields(`garden tomato soil compost seedling greenhouse irrigation mulch pruning harvest basil orchard`),
		strings.Fields(`marathon training interval tempo recovery sneakers hydration stretching pace mileage taper injury`),
		strings.Fields(`kitchen renovation cabinet countertop tiles plumber electrician permit contractor sink oven flooring`),
		strings.Fields(`wedding venue caterer florist photographer invitation guestlist dress rings vows reception toast`),
		strings.Fields(`mortgage refinance interest lender appraisal escrow closing downpayment credit rate amortization broker`),
		strings.Fields(`kubernetes pod node helm ingress autoscaler namespace deployment replica manifest kubelet etcd`),
		strings.Fields(`postgres index vacuum replication query planner transaction deadlock schema partition wal snapshot`),
		strings.Fields(`puppy vaccination leash training kibble veterinarian grooming crate walk treats fetch microchip`),
		strings.Fields(`novel chapter manuscript editor publisher plot character dialogue outline draft agent royalties`),
		strings.Fields(`camping tent trailhead backpack campfire lantern sleepingbag permit ranger canyon summit compass`),
		strings.Fields(`tax deduction receipt filing accountant refund audit withholding return bracket expense mileage`),
		strings.Fields(`piano lesson scales chord sonata metronome recital practice sheet tempo pedal teacher`),
		strings.Fields(`startup pitch investor seed valuation runway cofounder equity term sheet traction hiring`),
		strings.Fields(`diet protein calories recipe meal prep vegetables breakfast snack sugar fiber portions`),
		strings.Fields(`car mechanic brakes tires oil transmission inspection warranty dealership lease mileage battery`),
		strings.Fields(`vacation itinerary museum beach passport visa luggage ferry rental sightseeing souvenir guidebook`),
		strings.Fields(`classroom homework semester exam syllabus lecture grading tutor scholarship thesis professor campus`),
		strings.Fields(`security phishing firewall vulnerability patching audit encryption certificate malware sso mfa pentest`),
		strings.Fields(`podcast episode microphone editing guest sponsor audience recording transcript intro outro hosting`),
		strings.Fields(`moving boxes movers lease landlord deposit utilities address packing truck storage inventory`),
	}

	entities = strings.Fields(`Alice Bob Carol Dmitri Elena Farid Grace Hiroshi Ingrid Jamal Keiko Liam
		Maria Noah Olga Priya Quentin Rosa Sanjay Tomas Ursula Victor Wen Ximena Yusuf Zoe
		Acme Globex Initech Umbrella Stark Wayne Hooli Vandelay Wonka Cyberdyne
		Berlin Lisbon Nairobi Osaka Toronto Denver Seattle Madrid Oslo Bangalore
		Jira Slack Grafana Postgres Kafka Redis Stripe Salesforce Figma Notion`)
)

// rngFor is a generator seeded from the corpus seed and two coordinates.
func (c Corpus) rngFor(a, b uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(c.Seed)^0x9e3779b97f4a7c15, a<<32^b))
}

// ChatID names chat i; the seed is part of it so runs with different seeds
// against one server do not mix.
func (c Corpus) ChatID(i int) string { return fmt.Sprintf("bench-s%d-c%05d", c.Seed, i) }

// UserID is chat i's user (several chats per user).
func (c Corpus) UserID(i int) string { return fmt.Sprintf("bench-user-%03d", i%200) }

// Role alternates user and assistant.
func (c Corpus) Role(turn int) string {
	if turn%2 == 0 {
		return "user"
	}
	return "assistant"
}

// chatTopics are the three topics chat i talks about.
func (c Corpus) chatTopics(i int) [3][]string {
	r := c.rngFor(uint64(i), 1<<31)
	p := r.Perm(len(topics))
	return [3][]string{topics[p[0]], topics[p[1]], topics[p[2]]}
}

// Turn is the text of chat i's turn t (0-based): 10-60 words (or, Long,
// 100-1,500 characters) in sentences, mixing function words, general
// words, the chat's topics, named entities and the odd ticket id or amount.
func (c Corpus) Turn(i, t int) string {
	r := c.rngFor(uint64(i), uint64(t)+1)
	tp := c.chatTopics(i)
	// One topic dominates each turn, so turns within a chat differ too.
	main := tp[r.IntN(3)]
	n := 10 + r.IntN(51)
	var b strings.Builder
	target := 0
	if c.Long {
		target = longMinChars + r.IntN(longMaxChars-14-longMinChars+1)
		b.Grow(longMaxChars)
	} else {
		b.Grow(n * 8)
	}
	last := func(w int) bool {
		if c.Long {
			return b.Len() >= target
		}
		return w == n-1
	}
	sentence := 0
	for w := 0; ; w++ {
		var word string
		switch x := r.IntN(100); {
		case x < 34:
			word = functionWords[r.IntN(len(functionWords))]
		case x < 60:
			word = generalWords[r.IntN(len(generalWords))]
		case x < 82:
			word = main[r.IntN(len(main))]
		case x < 88:
			other := tp[r.IntN(3)]
			word = other[r.IntN(len(other))]
		case x < 96:
			word = entities[r.IntN(len(entities))]
		case x < 98:
			word = fmt.Sprintf("INC-%04d", r.IntN(10000))
		default:
			word = fmt.Sprintf("$%d", 10*(1+r.IntN(500)))
		}
		if w > 0 {
			b.WriteByte(' ')
		}
		if sentence == 0 {
			word = strings.ToUpper(word[:1]) + word[1:]
		}
		b.WriteString(word)
		sentence++
		end := last(w)
		if sentence >= 6+r.IntN(10) || end {
			if r.IntN(5) == 0 {
				b.WriteByte('?')
			} else {
				b.WriteByte('.')
			}
			sentence = 0
		}
		if end {
			return b.String()
		}
	}
}

// Query draws a query from one of chat i's first turns (t < turns): 3-8 of
// that turn's content words, in order, as a supervisor would phrase a
// lookup of something said earlier.
func (c Corpus) Query(r *rand.Rand, i, turns int) string {
	t := r.IntN(max(turns, 1))
	words := strings.Fields(c.Turn(i, t))
	content := words[:0:0]
	for _, w := range words {
		w = strings.Trim(w, ".?")
		if !isFunctionWord(strings.ToLower(w)) {
			content = append(content, w)
		}
	}
	if len(content) == 0 {
		return strings.Join(words, " ")
	}
	k := min(3+r.IntN(6), len(content))
	start := r.IntN(len(content) - k + 1)
	return strings.Join(content[start:start+k], " ")
}

var functionSet = func() map[string]bool {
	m := make(map[string]bool, len(functionWords))
	for _, w := range functionWords {
		m[w] = true
	}
	return m
}()

func isFunctionWord(w string) bool { return functionSet[w] }
