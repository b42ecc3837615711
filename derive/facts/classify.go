package facts

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/memory"
)

// Building blocks of the patterns. Apostrophes are straight (prose.Clean).
const (
	adv    = `(?:(?:really|also|just|recently|finally|actually|still|totally|absolutely|now|currently|already|even|definitely|truly|usually|always|often|sometimes|personally|kinda|officially|lately|then|since|both|all|each|first|originally|eventually|gradually|mostly|only|slowly|seriously) )*`
	months = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`
	days   = `(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)`
	// family, pets and belongings one "has": "I have two kids".
	owned = `(?:kids?|children|child|sons?|daughters?|sisters?|brothers?|siblings?|wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|dogs?|cats?|pets?|pupp(?:y|ies)|kittens?|birds?|parrots?|horses?|rabbits?|bunn(?:y|ies)|turtles?|snakes?|fish|grandkids|grandchildren|twins|cars?|house|apartment|flat|degree|job|garden|bikes?|motorcycle|boat|farm|shop|business|band|blog|podcast|channel)`
	// people and things that are "my ...".
	mine = `(?:sister|brother|mom|mum|mother|dad|father|wife|husband|partner|son|daughter|kid|children|family|friend|boss|dog|cat|puppy|pet|name|job|birthday|hometown|home|house|grandma|grandmother|grandpa|grandfather|parent|team|company|boyfriend|girlfriend|aunt|uncle|cousin|baby|niece|nephew|neighbou?r|roommate|fianc[eé]e?|goal|dream|plan|degree|major|car|garden|band|business|shop|book|novel|thesis)s?`
	// markers of a time still to come.
	future = `(?:tomorrow|tonight|next (?:week|month|year|weekend|summer|spring|fall|autumn|winter|semester|time|` + days + `)|this (?:coming )?(?:week|month|year|weekend|summer|spring|fall|autumn|winter|evening|afternoon|` + days + `)|later this (?:week|month|year)|in (?:a few|\d+|two|three|four|five|six) (?:days|weeks|months|years)|on ` + days + `|on ` + months + ` \d{1,2}|on \d{1,2}(?:st|nd|rd|th)? (?:of )?` + months + `|in ` + months + `|upcoming|soon)`
)

// irregular past tenses (and "-ed" forms are past too); vaguePast are past
// verbs of small talk or of thinking, which say nothing about the speaker's
// life.
var (
	vaguePast = set(`thought felt knew meant said told heard saw wanted needed guessed wondered noticed realized realised
figured hoped asked mentioned forgot understood loved liked enjoyed hated appreciated meant seemed supposed used tried
decided agreed did was were`)
	// vagueObject are the first words of a predicate that refers back to
	// the conversation, not to the speaker's life: "I love that!",
	// "I'd love to hear more", "I want to thank you".
	vagueObject = set(`that this it it's its you your yours how what when those these them him her seeing hearing
hear see know say thank tell talk chat share ask check catch let go admit mention keep be do help hearing reading
sure glad happy sorry so too more asking saying bothering complaining nagging repeating`)
)

// A pattern matches a prose sentence; its last group is the predicate that
// must carry content.
type pattern struct {
	kind   string
	rank   int
	re     *regexp.Regexp
	person bool // only from a person talking about themself
	other  bool // its subject is a thing, never the speaker
	past   bool // its predicate starts with a past tense
	need   []string
	// lead and also are finer pre-checks on an ASCII sentence, exact
	// (false only when the expression cannot match): the sentence's first
	// word must be one of lead, its lowercased text hold one of also.
	lead map[string]bool
	also []string
	// standing: the sentence is a standing instruction (rendered with
	// StandingPrefix, shown whatever the question: see IsStanding).
	standing bool
	// unless: a predicate it matches is none ("how uncomplicated it is").
	unless *regexp.Regexp
}

func p(kind string, rank int, person bool, re string) pattern {
	return pattern{kind: kind, rank: rank, re: regexp.MustCompile(`(?i)` + re), person: person}
}

// imperativeLeads start a request to the assistant, not a statement.
var imperativeLeads = set(`please always never`)

var selfWords = set(`i i'm i've i'd i'll we we're we've we'd we'll me my our`)

var patterns = []pattern{
	// Decisions, from anyone.
	needs("decision", p(memory.FactDecision, rankDecision, false, `^decision:\s*(.+)`)),
	needs("decided|agreed", p(memory.FactDecision, rankDecision, false, `\b(?:we|i)(?:'ve| have)? (?:finally |just )?(?:decided|agreed) (?:to|on|that|we'll|we will) (.+)`)),
	needs("let", p(memory.FactDecision, rankDecision, false, `\blet'?s (?:go with|use|pick|choose|book|settle on|stick with|schedule|switch to|move to|go for|do it on|meet on|meet at) (.+)`)),
	needs(" we", also("we'll |we will |we're |we are ", p(memory.FactDecision, rankDecision, false, `\bwe(?:'ll| will|'re| are) (?:go(?:ing)? with|use|using|pick|picking|ship|shipping|launch|book|booking|switch(?:ing)? to|mov(?:e|ing) to|stick(?:ing)? with|drop(?:ping)?|ditch(?:ing)?) (.+)`))),
	// "GHA it is then", "ok Keystone it is": a choice made, said as people
	// say it (what comes before "it is" must hold a content word: "here
	// it is" decides nothing).
	needs(" it is", unless(`\b(?:how|what|where|when|why|which|who|whoever|whatever|here|there|this|that|as|so|such|is|was|love|loves|like|likes|think|know|see)\b`, p(memory.FactDecision, rankDecision, false, `^(?:(?:ok|okay|right|fine|so|great|cool|alright|yes|yep|yeah|then)[,!.]? )*((?:the )?[\w&.'-]+(?: [\w&.'-]+){0,3}) it is(?: then)?[^\w]*$`))),
	needs(" we ", p(memory.FactDecision, rankDecision, false, `\bwe (?:settled on|went with|chose|picked|opted for) (.+)`)),
	needs("final |plan is|agreed", p(memory.FactDecision, rankDecision, false, `\b(?:final (?:decision|answer|choice) is|the plan is to|agreed[,:]? (?:we|let's|to)) (.+)`)),
	needs("moved|rescheduled|postponed|pushed|brought forward|changed|shifted", thing(p(memory.FactDecision, rankDecision, false, `^(?:the |our |my )?(?:[a-z][\w-]*(?: [a-z][\w-]*){0,3}) (?:is |was |has been |got |have been )?(?:moved|rescheduled|postponed|pushed(?: back)?|brought forward|changed|shifted) to (.*(?:\d|\b`+months+`\b|\b`+days+`\b).*)`))),
	leads("ok okay so then instead use set make change switch", p(memory.FactDecision, rankDecision, false, `^(?:ok(?:ay)?,? |so,? |then,? |instead,? )?(?:use|set|make|change|switch) (\S.*?\s(?:=|to)\s.+)`)),

	// Attributes.
	needs(" i'm | i am ", p(memory.FactAttribute, rankAttribute, true, `\bi(?:'m| am) `+adv+`(vegetarian|vegan|pescatarian|lactose[- ]intolerant|gluten[- ]free|c(?:o)?eliac|diabetic|pregnant|married|engaged|single|divorced|retired|widowed|left-handed|colou?r-?blind|allergic to .+|intolerant to .+|\d{1,3} years old.*|from .+|based in .+|originally from .+)`)),
	// A diet said as texting says it ("im veggie", "i'm plant-based", "we're
	// both vegetarian": the person's own, with whoever they plan for), or
	// of someone named ("and tom is dairy free", "gran is coeliac"): a
	// constraint (IsConstraint) on every later food suggestion. The other
	// person opens a clause; "the soup is dairy free", "which is vegan",
	// "bread is vegan" and "mine is vegan" are dishes.
	needs(" im | i'm | i am | we're | we are ", p(memory.FactAttribute, rankAttribute, true, `\b(?:i(?:'m| am|m)|we(?:'re| are)(?: both| all)?) `+adv+`(`+diets+`|lactose[- ]intolerant|c(?:o)?eliac)\b`)),
	needs("vegetarian|veggie|vegan|pescatarian|plant|gluten|dairy|nut|lactose|halal|kosher|coeliac|celiac|allergic", unless(`^(?:which|who|that|it|this|there|everything|all|food|menu|dish|place|restaurant|cafe|option|one|it's|what|mine|yours|ours|theirs|his|hers|rest|soup|bread|pizza|curry|cake|pasta|salad|sauce|dessert|pudding|starter|main|meal|burger|sandwich|wrap|pie|risotto|stew|chilli|chili|lasagne|lasagna|noodles|rice|milk|cheese|chocolate|icecream|biscuit|cookie|muffin|brownie|bar|snack|drink|wine|beer|coffee|tea|recipe|version|option|kitchen|bakery|range|batch|loaf)\b`,
		p(memory.FactAttribute, rankAttribute, false, `(?:^|[,;:.!?] |\band |\bbut |\bso |\balso |\bplus )((?:my |our )?[a-z]+ (?:is|'s) (?:also |fully |strictly )?(?:`+diets+`|c(?:o)?eliac|celiac|lactose[- ]intolerant|allergic to [^,.;!?]+))\b`))),
	needs(" i'm | i am ", p(memory.FactAttribute, rankAttribute, true, `\bi(?:'m| am) `+adv+`((?:a|an) [a-z\- ]+)`)),
	needs("work", p(memory.FactAttribute, rankAttribute, true, `\bi(?: |'m |'ve | am | have )`+adv+`(?:work|worked|working|been working) (?:as|at|for|in|on) (.+)`)),
	needs("live|grew up|born| come from| came from", p(memory.FactAttribute, rankAttribute, true, `\b(?:i|we)(?: |'ve | have )`+adv+`(?:live|lived|grew up|was born|come from|came from) (?:back )?(?:in|to|from|near|with|out of) (.+)`)),
	// A move is an event (or a plan), not who one is: it updates where one
	// lives (supersede.go) but is no preference of the profile's.
	needs("moved|relocated", p(memory.FactEvent, rankAttribute, true, `\b(?:i|we)(?: |'ve | have )`+adv+`(?:moved|relocated) (?:back )?(?:in|to|from|near|with|out of) (.+)`)),
	needs("moving|relocating", p(memory.FactPlan, rankAttribute, true, `\b(?:i|we)(?:'m| am|'re| are) `+adv+`(?:moving|relocating) (?:back )?(?:to|from) (.+)`)),
	needs(" have | got |'ve got", p(memory.FactAttribute, rankAttribute, true, `\bi(?: |'ve )`+adv+`(?:have|got|have got) ((?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+) (?:[\w-]+ ){0,2}?`+owned+`\b.*)`)),
	leads("and but so also oh well plus btw my", p(memory.FactAttribute, rankAttribute, true, `^(?:(?:and|but|so|also|oh|well|plus|btw),? )?my ((?:[\w-]+ ){0,2}?`+mine+`\b(?:\W+\w+){2,}.*)`)), // two words or more after it: "well my mum did" says nothing of her
	needs(" i'm | i am ", p(memory.FactAttribute, rankAttribute, true, `\bi(?:'m| am) `+adv+`(?:studying|learning|training|majoring|enrolled|volunteering|pursuing|taking|doing|working on|writing|building|raising) (.+)`)),

	needs("lucky|blessed|grateful|thankful|fortunate", p(memory.FactAttribute, rankAttribute, true, `\bi(?:'m| am) `+adv+`(?:so |very |super |pretty )?(?:lucky|blessed|grateful|thankful|fortunate) to have (.+)`)),

	// Feelings about something in one's life.
	needs(" i'm | i am | i feel | i felt | i was ", p(memory.FactOther, rankFeeling, true, `\bi(?:'m| am| feel| felt| was) `+adv+`(?:so |very |super |pretty |a bit |a little |kind of )*(?:excited|thrilled|nervous|worried|anxious|stressed|swamped|busy|overwhelmed|struggling|obsessed|curious|scared|afraid|grateful|thankful|keen|inspired|motivated|sad|upset|heartbroken) (?:about|with|by|of|for|to|on) (.+)`)),

	// Preferences.
	needs("favorite|favourite", p(memory.FactPreference, rankPreference, true, `\bmy (?:all[- ]time )?favou?rite (.+)`)),
	needs(" i ", also("prefer|love|like|enjoy|adore|hate|detest|stand|don't|do not|never|avoid", p(memory.FactPreference, rankPreference, true, `\bi `+adv+`(?:prefer|love|like|enjoy|adore|hate|dislike|detest|can't stand|cannot stand|don't (?:really )?(?:like|eat|drink|do)|do not (?:like|eat|drink)|never (?:eat|drink)|avoid) (.+)`))),
	needs(" i'm | i am ", p(memory.FactPreference, rankPreference, true, `\bi(?:'m| am) `+adv+`(?:a (?:big |huge )?fan of|not a fan of|into|passionate about|obsessed with|crazy about|a big believer in) (.+)`)),
	needs(" i'd | i would ", p(memory.FactPreference, rankPreference, true, `\bi(?:'d| would) `+adv+`(?:rather|prefer|love to|like to) (.+)`)),
	// A standing instruction to the assistant ("Always include version
	// numbers when I ask about libraries", "Please never use emojis"): a
	// preference about every later answer, from the user only (the
	// assistant's "Always back up" is advice). The verb must shape an
	// answer, so "Never give up!" and "Always here to help" are not one.
	standing(leads("please always never", p(memory.FactPreference, rankPreference, true, `^(?:please,? )?(?:always|never) (?:`+answerVerbs+`) .+`))),
	// The same said in a clause of a longer sentence, or with "only",
	// "don't ever" or "from now on": "I work from home, please only
	// contact me by text or email", "and don't ever call before 10",
	// "from now on reply in Spanish". After "and" a "please" or an "ever"
	// must say it is asked: "they ... and always remind me of that day"
	// is no instruction. Reaching the person is part of how
	// to answer them (contactVerbs).
	standing(needs(" and always | and never | but always | but never | so always | so never | also always | also never ", also("please|pls|plz", p(memory.FactPreference, rankPreference, true, `\b(?:and|but|so|also) (?:always|never) ((?:`+answerVerbs+`|`+contactVerbs+`)\b.*\b(?:please|pls|plz)\b.*)`)))),
	standing(needs(" always | never | ever | from now on | going forward | in future | in the future | please only | pls only | plz only ", p(memory.FactPreference, rankPreference, true, `(?:(?:^|[,;:] )(?:(?:please|pls|plz),? )?(?:always|never|only|never ever|don't ever|do not ever) |\b(?:and|but|so|also) (?:(?:please|pls|plz),? (?:always|never|only|don't|do not) (?:ever )?|(?:don't|do not) ever )|(?:^|[,;:] )(?:from now on|going forward|in future|in the future),? (?:please,? )?)(?:`+answerVerbs+`|`+contactVerbs+`)\b(.+)`))),
	// "that's choir rehearsal, so never put runs on Wednesdays": "always"
	// or "never" after "so" opening a clause, the verb bare, is an order
	// drawn from what came before. After "and" or "but" it is most often
	// a habit ("and always rent a car in Malaga", "but never stays the
	// night"); a verb in the past, with an -s, or "mind" tells what
	// happened or is so ("so never went again", "so never mind").
	standing(needs(" so always | so never ", unless(`^(?:[a-z]+ed|[a-z]+[^s]s|went|came|got|gave|took|made|said|told|saw|knew|thought|found|left|brought|bought|heard|felt|kept|ran|wrote|ate|drank|paid|sent|spent|sold|won|lost|met|did|had|was|were|again|mind|really|there|on|in|at|a|an|the|been|being|so|too|very)\b`,
		p(memory.FactPreference, rankPreference, true, `(?:^|[,;:] )so,? (?:always|never) ([a-z]+\b.+)`)))),
	// "and cc bea on every invoice email pls", "put every receipt in the
	// blue folder": an order about every one of a kind is a standing one.
	// The order opens its clause (not "I'll put every effort in").
	standing(needs(" every ", p(memory.FactPreference, rankPreference, true, `(?:^|[,;:] )(?:(?:and|also|so|but) )?(?:(?:please|pls|plz),? )?((?:cc|bcc|copy|put|keep|send|file|save|log|add|attach|include|email|text|message|remind|check|mention|label|tag|forward|book|use|tell me|ask me|show me|give me)\b[^.?]*?\bevery\b.+)`))),
	// "pnpm pls. never npm in this repo": a thing never to use somewhere.
	standing(leads("please pls plz never", p(memory.FactPreference, rankPreference, true, `^(?:(?:please|pls|plz),? )?never ((?:use )?[a-z0-9@._-]+(?: [a-z0-9@._-]+)? (?:in|on|for|with|at) (?:this|these|the|our|my|any) .+)`))),
	// "Only contact me by email.", "I work from home, only text me":
	// "only" opening a sentence or a clause (a word too common to try the
	// whole pattern on every sentence holding it).
	standing(leads("only", p(memory.FactPreference, rankPreference, true, `^only ((?:`+answerVerbs+`|`+contactVerbs+`)\b.+)`))),
	standing(needs(" only ", also(", only |; only |: only ", p(memory.FactPreference, rankPreference, true, `[,;:] only ((?:`+answerVerbs+`|`+contactVerbs+`)\b.+)`)))),
	leads("please", p(memory.FactPreference, rankPreference, true, `^please (?:always|never) (.+)`)),
	// Rules announced for the whole of the work: "Ground rules for the
	// whole project: Arduino framework under PlatformIO …", "A few rules
	// for the whole process please.", "Standing rules for everything we
	// do: …", "Also a standing request: please give me all prices
	// including VAT." The speaker says what follows holds throughout, in
	// whatever words the rules themselves take ("no emojis anywhere",
	// "give me diffs instead of whole files"). A heading opening its
	// sentence (a colon, a dash or the sentence's end after it): ground or
	// standing rules (a few words after them before a colon or a dash:
	// "Some standing rules before we go further:"), or rules for the whole
	// or all of a thing.
	// "The rules of the game are simple", "the rules for the whole league
	// changed" and a holiday let's "house rules" are not the person's
	// instructions.
	standing(needs("rule|request|instruction|convention|in mind|remember", p(memory.FactPreference, rankPreference, true, `^`+headingLead+`(`+standingHeading+`.*)`))),

	// Plans.
	needs("off to", p(memory.FactPlan, rankPlan, true, `\bi(?:'m| am) `+adv+`off to (.+)`)),
	needs(" i'm | i am ", p(memory.FactPlan, rankPlan, true, `\bi(?:'m| am) `+adv+`(?:determined|committed|eager|ready|set|saving up|working hard|working towards?) (?:to|for) (.+)`)),
	needs(" i'm | i am ", p(memory.FactPlan, rankPlan, true, `\bi(?:'m| am) `+adv+`(?:searching|looking|hunting|saving|preparing|applying) (?:for|into) (.+)`)),
	needs(" i'm | i am | we're | we are ", p(memory.FactPlan, rankPlan, true, `\b(?:i|we)(?:'m| am|'re| are) `+adv+`(?:going to|gonna|planning to|planning on|about to|hoping to|aiming to|getting ready to|preparing to|thinking of|thinking about|considering|looking forward to|signed up for|signing up for|scheduled to|set to|starting|taking up) (.+)`)),
	needs(" to ", p(memory.FactPlan, rankPlan, true, `\b(?:i|we) `+adv+`(?:plan|intend|aim|hope|want|need|would like|'d like|have decided|'ve decided|decided) to (.+)`)),
	needs("tomorrow|tonight|next |this |later this| in | on |upcoming|soon", also("i'll |i will |i'm |i am |we'll |we will |we're |we are ", p(memory.FactPlan, rankPlan, true, `\b(?:i|we)(?:'ll| will|'m| am|'re| are) `+adv+`(\w+ .*\b`+future+`\b.*)`))),
	needs("tomorrow|tonight|next |this |later this| in | on |upcoming|soon", also(" i | we ", p(memory.FactPlan, rankPlan, true, `\b`+future+`,? (?:i|we) `+adv+`(\w+ .+)`))),

	// Events.
	needs("'ve | have ", also("i've |i have |we've |we have ", p(memory.FactEvent, rankEvent, true, `\b(?:i|we)(?:'ve| have) `+adv+`((?:been \w+ing|[a-z]+ed|gone|done|taken|begun|started|seen|won|made|bought|written|joined|built|grown|become) .+)`))),
	needs("used to", p(memory.FactEvent, rankEvent, true, `\bi `+adv+`used to (.+)`)),
	needs(" i | we ", past(p(memory.FactEvent, rankEvent, true, `\b(?:i|we) `+adv+`([a-z]+ .+)`))),
}

func thing(pt pattern) pattern { pt.other = true; return pt }
func unless(re string, pt pattern) pattern {
	pt.unless = regexp.MustCompile(`(?i)` + re)
	return pt
}
func standing(pt pattern) pattern { pt.standing = true; return pt }

// answerVerbs shape an answer: what a standing instruction asks of the
// assistant.
const answerVerbs = `include|use|format|provide|add|show|write|answer|reply|respond|explain|cite|mention|list|structure|present|highlight|number|summari[sz]e|label|avoid|omit|start|end|keep|put|break|follow|maintain|give me|tell me|ask me|remind me|refer|double-check|check|compare|offer|suggest|recommend|state|specify|note|clarify|link|quote|translate|plan|arrange|organi[sz]e|confirm|assume|send`

// ruleNouns name what a heading announces ("ground rules", "a standing
// request"), and ruleScope says it holds for the whole of the work ("for
// the whole project", "for everything we do", "for this chat").
// headingLead opens a heading ("and a few", "ok some"), mindNouns are
// the things to keep in mind one announces like rules, and headingAsk is
// the word of asking that may follow the heading ("please", "first").
// bareHeading and rulesLabel (facts.go) read the same headings.
const (
	ruleNouns   = `(?:rules?|requests?|instructions?)`
	ruleScope   = ` for (?:(?:the|this|our|my) (?:whole|entire) \w+|everything(?: (?:we|i) do)?|all of (?:this|it|them)|this (?:chat|conversation|project|thread|job))`
	headingLead = `(?:(?:and|also|so|but|ok|okay|right|btw),? )?(?:(?:a few|a couple of|some|my|our|the|one|two|three|four|five|a|an) )?`
	mindNouns   = `things to (?:keep|bear) in mind|things to remember`
	headingAsk  = `(?:,? (?:please|pls|plz|first))?`
	// standingHeading is a heading laying down what holds throughout:
	// ground or standing rules, or rules for the whole of a thing, then
	// a few words before a colon or a dash ("Some standing rules before
	// we go further:", "one rule for this chat pls, after last year's
	// chaos:"), or the heading's sentence ending.
	standingHeading = `(?:(?:ground|standing) ` + ruleNouns + `|(?:` + ruleNouns + `|conventions?|` + mindNouns + `)` + ruleScope + `)` + headingAsk +
		`(?:(?:,? [^:.!?]{1,40}?)?\s*[:–—-]|\s*(?:[.!]|$))`
)

// standingHeadingRe reads standingHeading after a heading's lead.
var standingHeadingRe = regexp.MustCompile(`(?i)^` + headingLead + standingHeading)

// contactVerbs are how to reach a person, which a standing instruction
// may govern too ("only contact me by text", "never call before 10am"),
// and how to give what is asked ("always give paces in min/km"; "never
// give up" is advice).
const contactVerbs = `give (?:the |all |your |my )?\w+ (?:in|as|with|to me)|contact|call|ring|phone|text|email|e-mail|message|ping|cc|copy|book|schedule|bill|charge|convert|round|measure|spell|address|wake|disturb|bother`

// StandingPrefix starts the text of a standing instruction's fact. The
// instruction follows in the user's own words, case and all: "pnpm pls.
// never npm in this repo", not "Pnpm pls." (a tool's name).
const StandingPrefix = "Standing instruction: "

// IsStanding reports whether f is a standing instruction: the user's
// request about every later answer. It holds whatever the question is
// about (its words rarely meet the question's), so a context shows it
// beside what retrieval finds.
func IsStanding(f memory.Fact) bool {
	return f.Kind == memory.FactPreference && strings.HasPrefix(f.Text, StandingPrefix)
}

// IsConstraint reports whether f states a constraint of the person's own
// that governs every later suggestion touching it — a diet, an allergy,
// an intolerance ("The user is vegetarian", "Lukas doesn't eat meat
// anymore", "Priya is allergic to peanuts"). Like a standing instruction
// it rarely shares words with the question it governs ("a recovery snack
// idea?"), so a context shows it whatever the question.
func IsConstraint(f memory.Fact) bool {
	switch f.Kind {
	case memory.FactAttribute, memory.FactPreference, memory.FactOther:
		return constraintRe.MatchString(f.Text)
	case memory.FactEvent: // "went vegan", not "went to a vegan festival"
		return becameRe.MatchString(f.Text)
	}
	return false
}

// IsAboutFood reports whether a question is about eating or drinking ("a
// recovery snack idea?", "where should we have dinner in Hakone?"): the
// questions a person's diet and allergies govern most directly.
func IsAboutFood(q string) bool { return foodRe.MatchString(q) }

var foodRe = regexp.MustCompile(`(?i)\b(?:eat|eats|eating|ate|food|foods|snack|snacks|meal|meals|breakfast|brunch|lunch|dinner|supper|dessert|recipe|recipes|cook|cooking|bake|baking|restaurant|restaurants|cafe|café|menu|dish|dishes|drink|drinks|grocery|groceries|ingredient|ingredients|cuisine|kaiseki|takeaway|takeout|catering|fuel|fueling|fuelling|nutrition|protein)\b`)

// diets are the ways of eating one is or becomes ("vegan", "gluten-free").
const diets = `vegetarian|veggie|vegan|pescatarian|plant[- ]based|gluten[- ]free|dairy[- ]free|nut[- ]free|lactose[- ]free|halal|kosher`

var becameRe = regexp.MustCompile(`(?i)\b(?:went|gone|became|become|turned|going) (?:fully |completely |strictly )?(?:` + diets + `)\b`)

var constraintRe = regexp.MustCompile(`(?i)\b(?:` + diets + `|allergic|allergy|allergies|intolerant|intolerance|coeliac|celiac|diabetic|(?:doesn't|don't|does not|do not|never|no longer|can't|cannot) (?:eat|drink)s?)\b`)

// needs gives a pattern the words ("|"-separated) one of which a sentence
// must hold for the pattern to be tried: a cheap test that spares most
// sentences most regular expressions.
func needs(words string, pt pattern) pattern { pt.need = strings.Split(words, "|"); return pt }
func past(pt pattern) pattern                { pt.past = true; return pt }
func leads(words string, pt pattern) pattern { pt.lead = set(words); return pt }
func also(words string, pt pattern) pattern  { pt.also = strings.Split(words, "|"); return pt }

// asciiLead is an ASCII sentence's first run of letters, lowercased.
// Case folding reaches beyond ASCII ("ſo" is "so" to (?i)), so lead and
// also judge only ASCII sentences.
func asciiLead(s string) string {
	end := 0
	for end < len(s) && (s[end]|0x20 >= 'a' && s[end]|0x20 <= 'z') {
		end++
	}
	return strings.ToLower(s[:end])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// view is a sentence as the pre-checks read it, each part worked out
// once: its words between spaces; for an ASCII sentence its lowercase and
// first word; which need lists it holds (by needGroup).
type view struct {
	norm        string
	ascii       bool
	lower, lead string
	held        [64]int8 // 0 unknown, 1 no, 2 yes
}

func newView(s string, ws []string) *view {
	v := &view{norm: " " + strings.Join(ws, " ") + " ", ascii: isASCII(s)}
	if v.ascii {
		v.lower, v.lead = strings.ToLower(s), asciiLead(s)
	}
	return v
}

// needGroup maps each pattern to the first pattern with the same need
// list, so that a list shared by several (" i'm | i am ") is looked for
// once per sentence.
var needGroup = func() []int {
	out := make([]int, len(patterns))
	first := map[string]int{}
	for i, pt := range patterns {
		k := strings.Join(pt.need, "|")
		if _, ok := first[k]; !ok {
			first[k] = i
		}
		out[i] = first[k]
	}
	return out
}()

// mayMatch applies pattern i's pre-checks to the sentence v views.
func (v *view) mayMatch(i int) bool {
	pt, g := patterns[i], needGroup[i]
	if v.held[g] == 0 {
		v.held[g] = 1
		if holdsAny(v.norm, pt.need) {
			v.held[g] = 2
		}
	}
	if v.held[g] == 1 {
		return false
	}
	if !v.ascii {
		return true
	}
	return (pt.lead == nil || pt.lead[v.lead]) && (pt.also == nil || holdsAny(v.lower, pt.also))
}

// classify matches one prose sentence against the patterns; the first
// pattern whose predicate carries content wins.
func classify(s string, sp prose.Speaker, role memory.Role, names map[string]bool) (candidate, bool) {
	written := s
	s = trimFiller(s)
	if strings.HasSuffix(s, "?") {
		return candidate{}, false
	}
	ws := lex.Words(s)
	if len(ws) < 2 {
		return candidate{}, false
	}
	// An event must say more than its verb: "I went there" is not one.
	rich := countContent(ws, names) >= 2
	v := newView(s, ws)
	for i, pt := range patterns {
		if (pt.person && !sp.Person) || (pt.kind == memory.FactEvent && !rich) || !v.mayMatch(i) {
			continue
		}
		at := pt.re.FindStringSubmatchIndex(s)
		if at == nil {
			continue
		}
		pred := s[at[len(at)-2]:at[len(at)-1]]
		if !meaningful(pt, s[at[0]:at[1]], pred, names) || (pt.unless != nil && pt.unless.MatchString(pred)) {
			continue
		}
		if pt.kind == memory.FactPreference && firstWordIn(imperativeLeads, s) && role != memory.RoleUser {
			continue
		}
		if pt.standing {
			if role != memory.RoleUser {
				continue // the assistant's "I'll always text you first" is a promise
			}
			return candidate{kind: pt.kind, rank: pt.rank, text: StandingPrefix + asWritten(s, written)}, true
		}
		kind, text, matched := pt.kind, s, s[at[0]:at[1]]
		if kind == memory.FactAttribute {
			var ok bool
			if s, ok = beforeReport(s, at[len(at)-2]); !ok {
				continue
			}
		}
		if kind == memory.FactPreference || kind == memory.FactAttribute {
			text = aboutClause(s, at[0], at[len(at)-2])
			if isPlan(pred) || wouldDo.MatchString(matched) {
				kind = memory.FactPlan // "I'd like to book Casa Amora", "I'd love to illustrate the sequel"
			}
		}
		return candidate{kind: kind, rank: pt.rank, text: render(kind, text, sp)}, true
	}
	// A person saying something changed ("the meeting is now on Tuesday")
	// states a fact that supersedes the older (supersede.go). The patterns
	// run only for a person's rich sentence: they are a fifth of the cost.
	if !sp.Person || !rich {
		return candidate{}, false
	}
	if u, ok := detectIn(s); ok && (len(u.Old) > 0 || len(u.Subject) > 0) {
		return candidate{kind: memory.FactOther, rank: rankEvent, text: render(memory.FactOther, s, sp)}, true
	}
	return candidate{}, false
}

// beforeReport cuts s where its predicate (from p) reports what someone
// said: "my running club friend Jana told me the Munich half is crowded"
// tells who Jana is to the speaker, and what she said is no attribute of
// theirs. What is left must name someone or say something of them ("my
// mom thinks I should rest" leaves "my mom": false).
func beforeReport(s string, p int) (string, bool) {
	m := reportVerb.FindStringIndex(s[p:])
	if m == nil {
		return s, true
	}
	pred := s[p : p+m[0]]
	if len(lex.Words(pred)) <= 3 && !strings.ContainsFunc(pred, unicode.IsUpper) {
		return "", false
	}
	// "my friend Lucy does events, she said …": the reporter's pronoun
	// goes with what is cut.
	return strings.TrimRight(danglingPronoun.ReplaceAllString(s[:p+m[0]], ""), ",;:-— ") + ".", true
}

// danglingPronoun is a subject pronoun left at the end of a cut clause.
var danglingPronoun = regexp.MustCompile(`(?i)(?:,| and| but| so)? (?:she|he|they|it|we|i)$`)

var reportVerb = regexp.MustCompile(`(?i)(?:,| and| but| who)? (?:told|tells|said|says|asked|asks|thinks|thought|mentioned|recommended|suggested|texted|wrote|warned) `)

// aboutClause is the clause of s that a preference or an attribute
// matched at [a,b): "Book Casa Amora for May 3-7, I'm vegetarian." is
// about the speaker only from "I'm" on, so the booking is not kept as who
// they are. A clause ends at ", ", "; ", " - " or " — "; the match may
// span several (a list). The clause before it is cut, one after it only
// when it is an errand or a plan (errandAfter: "so no meat please" says
// more of the preference).
func aboutClause(s string, a, p int) string {
	from, to := 0, len(s)
	for _, sep := range clauseSeps {
		if i := strings.LastIndex(s[:a], sep); i >= 0 && i+len(sep) > from {
			from = i + len(sep)
		}
	}
	if i := errandAfter(s[p:]); i >= 0 {
		to = p + i // "I'm vegetarian, book Casa Amora": the booking goes
	}
	if from == 0 && to == len(s) {
		return s
	}
	out := trimFiller(strings.TrimSpace(s[from:to])) // ", but I love …"
	if to < len(s) || !strings.ContainsAny(out[len(out)-1:], ".!") {
		out = strings.TrimRight(out, ",;:-— ") + "."
	}
	return prose.SentenceCase(out)
}

// errandAfter is where, in a predicate, a clause that is an errand or a
// plan starts ("…, book Casa Amora", "… and we are planning a trip"), -1
// when none does.
func errandAfter(pred string) int {
	at := -1
	for _, sep := range append(clauseSeps, " and ", " but ") {
		for off := 0; ; {
			i := strings.Index(pred[off:], sep)
			if i < 0 {
				break
			}
			rest := pred[off+i+len(sep):]
			if (at < 0 || off+i < at) && (errandVerbs[firstWord(rest)] || planClause.MatchString(rest)) {
				at = off + i
			}
			off += i + len(sep)
		}
	}
	return at
}

// planClause starts a clause of the speaker's plans: "we are planning a
// trip", "I'm flying to Osaka", "we'll book".
var planClause = regexp.MustCompile(`(?i)^(?:i|we)(?:'m| am|'re| are|'ll| will)? (?:also |now |then )?(?:planning|plan|going to|gonna|about to|booking|book|flying|moving|heading|leaving|travel(?:l)?ing|visiting|hoping to|want to|need to)\b`)

func firstWord(s string) string {
	if ws := lex.Words(s); len(ws) > 0 {
		return ws[0]
	}
	return ""
}

var clauseSeps = []string{", ", "; ", " - ", " — "}

// isPlan reports whether a preference's predicate is an errand the
// speaker means to do ("to book a table", "reserve Shigetsu"): a plan,
// not what they like.
func isPlan(pred string) bool {
	ws := lex.Words(pred)
	if len(ws) > 0 && ws[0] == "to" {
		ws = ws[1:]
	}
	return len(ws) > 0 && errandVerbs[ws[0]]
}

// wouldDo is wanting to do something ("I'd like to propose a fee of
// £225", "Greg would like to renew for 12 months"): a plan or an offer,
// not a taste ("I love to cook", "I'd rather not fly" are).
var wouldDo = regexp.MustCompile(`(?i)\b(?:'d|would) (?:\w+ )?(?:love|like) to\b`)

var errandVerbs = set(`book reserve order schedule buy purchase pay cancel rebook confirm rent hire move relocate sign register
apply submit send email call text add remove check`)

func holdsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return len(subs) == 0
}

// meaningful reports whether a matched predicate says something: it does
// not start by pointing back at the conversation, it holds a content word,
// and an event's verb is a past tense that is not small talk.
func meaningful(pt pattern, match, pred string, names map[string]bool) bool {
	ws := lex.Words(pred)
	if first := lex.Words(match); pt.other && len(first) > 0 && selfWords[first[0]] {
		return false // "I moved to Denver in May" is where one lives
	}
	// A standing instruction's predicate follows its verb: "never book
	// that courier again" says what, whatever word comes first.
	if len(ws) == 0 || !pt.standing && vagueObject[ws[0]] || content(pred, names) < 1 {
		return false
	}
	if pt.kind == memory.FactPreference && !pt.standing && len(ws) <= 3 && pronounObject(ws[1:]) {
		return false // "I'd love to read it": what "it" is lives in another turn
	}
	if pt.past {
		v := ws[0]
		if v == "had" && len(ws) > 2 && ws[1] == "to" {
			return content(strings.Join(ws[2:], " "), names) >= 1 // "I had to close my account"
		}
		if !(prose.IrregularPast[v] || strings.HasSuffix(v, "ed")) || vaguePast[v] || len(ws) < 3 {
			return false
		}
		return content(strings.Join(ws[1:], " "), names) >= 1
	}
	if pt.kind == memory.FactAttribute && strings.HasPrefix(strings.ToLower(pred), "a") {
		// "I'm a bit tired", "I'm a big fan" are not who one is.
		for _, w := range ws {
			if notIdentity[w] {
				return false
			}
		}
	}
	return true
}

// pronounObject: ws (after a verb) name nothing but a pronoun ("to read
// it", "see them again").
func pronounObject(ws []string) bool {
	n := 0
	for _, w := range ws {
		switch {
		case objectPronouns[w]:
			n++
		case w != "to" && w != "again" && w != "too" && w != "more" && w != "one" && w != "day":
			return false
		}
	}
	return n > 0
}

var objectPronouns = set(`it that this them those these him her`)

var notIdentity = set(`bit little lot fan tad sort kind mess wreck bundle sucker fool huge big part moment while way
long few couple good great`)

// content counts the content words of s that are not a speaker's name.
func content(s string, names map[string]bool) int { return countContent(lex.Words(s), names) }

// countContent counts the content words among ws (lex.Words) that are
// not a speaker's name.
func countContent(ws []string, names map[string]bool) int {
	n := 0
	for _, w := range ws {
		if lex.Keyword(w) && !names[w] {
			n++
		}
	}
	return n
}

var (
	fillerLead      = regexp.MustCompile(`(?i)^(?:(?:oh|wow|woah|whoa|yeah|yes|yep|yup|haha|hahaha|lol|well|so|and|but|btw|anyway|honestly|um|hmm|ah|aw+|omg|ok|okay|hey|hi|man|gosh|ooh|ha|totally|true|right|also|plus|now)[,!.]*\s+)+`)
	labelLead       = regexp.MustCompile(`(?i)^(?:update|note|fyi|ps|edit|reminder|heads up|correction|btw)\s*[:,-]\s*`)
	subjectlessPast = regexp.MustCompile(`(?i)^(?:just |finally |recently )?(?:started|got|had|went|took|made|finished|bought|joined|visited|moved|tried|signed|booked|adopted|spent|met|ran|won|lost|learned|learnt|picked|painted|wrote|built|saw|watched|read|quit|graduated|attended|volunteered|hosted|organized|organised|baked|cooked) `)
	subjectless     = regexp.MustCompile(`(?i)^(?:gonna|going to|planning to|planning on|about to|hoping to|thinking of|thinking about|trying to|off to) `)
)

// trimFiller drops leading interjections and a leading name called out:
// "Yeah, I went" and "Mel, I went" say "I went"; a plan said without its
// subject ("Gonna continue my studies") gets it back.
func trimFiller(s string) string {
	t := s
	if firstWordIn(labelWords, t) {
		t = labelLead.ReplaceAllString(t, "")
	}
	if firstWordIn(fillerWords, t) { // the regular expressions only when they can match
		t = fillerLead.ReplaceAllString(t, "")
	}
	t = t[vocativeEnd(t):]
	switch {
	case !firstWordIn(subjectlessFirst, t):
	case subjectless.MatchString(t):
		t = "I'm " + t
	case strings.HasPrefix(strings.ToLower(t), "been "):
		t = "I've " + t
	case subjectlessPast.MatchString(t):
		t = "I " + t
	}
	if t == "" {
		return s
	}
	return prose.SentenceCase(t)
}

// asWritten undoes trimFiller's capital: a standing instruction is quoted
// in the user's own words, case and all ("cc bea on every invoice
// email", "pnpm pls"), the capital of a name or a tool's name being the
// user's to give.
func asWritten(t, orig string) string {
	r, n := utf8.DecodeRuneInString(t)
	if rest := t[n:]; strings.HasSuffix(orig, rest) {
		if i := len(orig) - len(rest); i > 0 {
			if o, _ := utf8.DecodeLastRuneInString(orig[:i]); unicode.ToUpper(o) == r {
				return string(o) + rest
			}
		}
	}
	return t
}

var (
	labelWords       = set(`update note fyi ps edit reminder heads correction btw`)
	fillerWords      = set(`oh wow woah whoa yeah yes yep yup haha hahaha lol well so and but btw anyway honestly um hmm ah aw aww awww omg ok okay hey hi man gosh ooh ha totally true right also plus now`)
	subjectlessFirst = set(`gonna going planning about hoping thinking trying off been just finally recently started got had went took made finished bought joined visited moved tried signed booked adopted spent met ran won lost learned learnt picked painted wrote built saw watched read quit graduated attended volunteered hosted organized organised baked cooked`)
)

// firstWordIn reports whether the lowercased first word of s is in set
// (lowered without allocating when it is short ASCII: it runs on every
// sentence).
func firstWordIn(set map[string]bool, s string) bool {
	end := strings.IndexAny(s, " ,!.:;-\t")
	if end < 0 {
		end = len(s)
	}
	w := s[:end]
	var buf [24]byte
	if len(w) > len(buf) || !isASCII(w) {
		return set[strings.ToLower(w)]
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return set[string(buf[:len(w)])]
}

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// vocativeEnd is the length of a name called out at the start of s (what
// `^[A-Z][a-z]+(?: [A-Z][a-z]+)?[,!]\s+` matches: "Mel, "), 0 when there
// is none.
func vocativeEnd(s string) int {
	i := capitalised(s, 0)
	if i == 0 {
		return 0
	}
	if i < len(s) && s[i] == ' ' {
		if j := capitalised(s, i+1); j > 0 {
			i = j
		}
	}
	if i >= len(s) || (s[i] != ',' && s[i] != '!') {
		return 0
	}
	j := i + 1
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\f' || s[j] == '\r') {
		j++
	}
	if j == i+1 {
		return 0
	}
	return j
}

// capitalised is where a `[A-Z][a-z]+` at s[i:] ends, 0 when there is none.
func capitalised(s string, i int) int {
	if i >= len(s) || s[i] < 'A' || s[i] > 'Z' {
		return 0
	}
	j := i + 1
	for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
		j++
	}
	if j == i+1 {
		return 0
	}
	return j
}
