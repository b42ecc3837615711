package config

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks yaml.v3 nodes against the schema, collecting every problem
// instead of stopping at the first.
type decoder struct {
	getenv   func(string) string
	problems []Problem
	warnings []Problem
	// keys maps a dotted path to the key node that set it, for cross-field
	// checks and warnings that need a line after decoding.
	keys map[string]*yaml.Node
	// merged counts pairs pulled in through merge keys: nested "<<" lists can
	// multiply like a billion-laughs document, so there is a budget.
	merged int

	// aliased counts the nodes of collections reached through aliases (an
	// anchor may be referenced many times); past the budget they read as null.
	aliased int
	sizes   map[*yaml.Node]int
}

// Budgets against documents that are small but expand hugely.
const (
	maxMergedPairs = 10000
	maxAliased     = 100000
	maxProblems    = 500
)

// handler decodes one value found at path.
type handler func(val *yaml.Node, path string)

// fields is the schema of one mapping: key → handler.
type fields map[string]handler

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	switch {
	case len(d.problems) < maxProblems:
		d.problems = append(d.problems, at(n, path, fmt.Sprintf(format, args...)))
	case len(d.problems) == maxProblems:
		d.problems = append(d.problems, at(n, path, fmt.Sprintf("too many problems; stopped reporting after %d", maxProblems)))
	}
}

// collection resolves a mapping or list value, charging what comes through
// an alias to the alias budget.
func (d *decoder) collection(n *yaml.Node, path string) *yaml.Node {
	if n == nil || n.Kind != yaml.AliasNode {
		return n
	}
	r := resolve(n)
	if r == nil {
		return nil
	}
	size := d.treeSize(r)
	d.aliased += size
	if d.aliased > maxAliased {
		if d.aliased-size <= maxAliased {
			d.fail(n, path, "aliases expand to more than %d nodes", maxAliased)
		}
		return nil
	}
	return r
}

// treeSize counts a node's subtree (an alias inside counts as one node: it
// is charged again when it is itself dereferenced), memoised per node.
func (d *decoder) treeSize(n *yaml.Node) int {
	if s, ok := d.sizes[n]; ok {
		return s
	}
	s := 1
	if n.Kind != yaml.AliasNode {
		for _, c := range n.Content {
			s += d.treeSize(c)
		}
	}
	if d.sizes == nil {
		d.sizes = map[*yaml.Node]int{}
	}
	d.sizes[n] = s
	return s
}

func (d *decoder) warn(n *yaml.Node, path, format string, args ...any) {
	d.warnings = append(d.warnings, at(n, path, fmt.Sprintf(format, args...)))
}

func at(n *yaml.Node, path, msg string) Problem {
	p := Problem{Path: path, Message: msg}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	return p
}

// key returns the key node that set path (nil when absent).
func (d *decoder) key(path string) *yaml.Node { return d.keys[path] }

// has reports whether path was set in the file.
func (d *decoder) has(path string) bool { return d.keys[path] != nil }

// first returns the key node of the first of paths that was set.
func (d *decoder) first(paths ...string) *yaml.Node {
	for _, p := range paths {
		if n := d.keys[p]; n != nil {
			return n
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve follows aliases to the anchored node. yaml.v3 rejects alias
// cycles at parse time; the bound is belt and braces.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node holds for "got ..." messages. Scalars are quoted
// from the file's own text only (never an expanded environment value).
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n == nil:
		return "nothing"
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		if strings.Contains(n.Value, "${") {
			return "a value from the environment"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return strconv.Quote(v)
	}
	return "an unexpected node"
}

type pair struct {
	key, val *yaml.Node
	merged   bool // came from a "<<" merge key; explicit keys win over it
}

// pairs lists a mapping's key/value pairs, explicit ones first, then those
// merged in with "<<: *anchor" (YAML merge keys).
func (d *decoder) pairs(n *yaml.Node, path string, depth int) []pair {
	var out, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if depth > 8 {
				d.fail(k, path, "merge keys nested too deeply")
				continue
			}
			var srcs []*yaml.Node
			if rv := resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
				srcs = rv.Content
			} else {
				srcs = []*yaml.Node{v}
			}
			for _, s := range srcs {
				if d.merged > maxMergedPairs {
					return out
				}
				s = d.collection(s, path)
				if s == nil || s.Kind != yaml.MappingNode {
					d.fail(k, path, "a merge key (<<) needs a mapping or a list of mappings, got %s", describe(s))
					continue
				}
				for _, p := range d.pairs(s, path, depth+1) {
					if d.merged++; d.merged > maxMergedPairs {
						if d.merged == maxMergedPairs+1 {
							d.fail(k, path, "merge keys (<<) expand to more than %d keys", maxMergedPairs)
						}
						return out
					}
					p.merged = true
					merged = append(merged, p)
				}
			}
			continue
		}
		out = append(out, pair{key: k, val: v})
	}
	return append(out, merged...)
}

// mapping decodes a mapping node against fs. Unknown and duplicate keys are
// problems; null or absent means "nothing set". It returns the keys present.
func (d *decoder) mapping(n *yaml.Node, path string, fs fields) map[string]*yaml.Node {
	n = d.collection(n, path)
	if isNull(n) || len(d.problems) > maxProblems {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping (key: value), got %s", describe(n))
		return nil
	}
	present := map[string]*yaml.Node{}
	for _, p := range d.pairs(n, path, 0) {
		k := resolve(p.key)
		if k == nil || k.Kind != yaml.ScalarNode {
			d.fail(p.key, path, "a key must be a plain string, got %s", describe(p.key))
			continue
		}
		name := k.Value
		sub := join(path, name)
		if firstKey, dup := present[name]; dup {
			if !p.merged {
				d.fail(k, sub, "duplicate key (first set at line %d)", firstKey.Line)
			}
			continue
		}
		fn, ok := fs[name]
		if !ok {
			d.fail(k, sub, "unknown key%s; valid keys here: %s", suggest(name, fs), strings.Join(keysOf(fs), ", "))
			continue
		}
		present[name] = k
		if d.keys != nil {
			d.keys[sub] = k
		}
		fn(p.val, sub)
	}
	return present
}

func keysOf(fs fields) []string {
	ks := make([]string, 0, len(fs))
	for k := range fs {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// suggest proposes the closest valid key, or the section a misplaced key
// belongs to.
func suggest(name string, fs fields) string {
	best, bestD := "", 3
	for k := range fs {
		if dist := editDistance(strings.ToLower(name), k); dist < bestD || (dist == bestD && k < best) {
			best, bestD = k, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if home, ok := homeOf[name]; ok {
		if _, here := fs[home]; here {
			return fmt.Sprintf(" (it belongs under %s:)", home)
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scalar returns the node's text with ${VAR} expanded. ok is false (and the
// problem reported) when the node is not a scalar or expansion failed; null
// is reported through isNil so each type decides what null means.
func (d *decoder) scalar(n *yaml.Node, path, want string) (s string, isNil, ok bool) {
	n = resolve(n)
	if isNull(n) {
		return "", true, true
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "must be %s, got %s", want, describe(n))
		return "", false, false
	}
	out, _, probs := expand(n.Value, d.getenv)
	for _, p := range probs {
		d.fail(n, path, "%s", p)
	}
	return out, false, len(probs) == 0
}

// str sets a string; null sets "".
func (d *decoder) str(dst *string) handler {
	return func(n *yaml.Node, path string) {
		if s, _, ok := d.scalar(n, path, "a string"); ok {
			*dst = s
		}
	}
}

// nonEmpty sets a string that must not end up empty.
func (d *decoder) nonEmpty(dst *string) handler {
	return func(n *yaml.Node, path string) {
		if s, _, ok := d.scalar(n, path, "a string"); ok {
			if s == "" {
				d.fail(n, path, "must not be empty")
				return
			}
			*dst = s
		}
	}
}

// enum sets a string that must be one of allowed; null leaves it unchanged.
func (d *decoder) enum(dst *string, allowed ...string) handler {
	return func(n *yaml.Node, path string) {
		s, isNil, ok := d.scalar(n, path, "one of "+strings.Join(allowed, ", "))
		if !ok || isNil {
			return
		}
		for _, a := range allowed {
			if s == a {
				*dst = s
				return
			}
		}
		d.fail(n, path, "must be one of %s, got %s", strings.Join(quoteAll(allowed), ", "), describe(n))
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// integer parses the node as an int64 within [lo, hi]; ok false means a
// problem was reported or the value is null.
func (d *decoder) integer(n *yaml.Node, path string, lo, hi int64) (int64, bool) {
	s, isNil, ok := d.scalar(n, path, "an integer")
	if !ok || isNil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 10, 64)
	if err != nil {
		d.fail(n, path, "must be an integer, got %s", describe(n))
		return 0, false
	}
	if v >= lo && v <= hi {
		return v, true
	}
	switch {
	case hi < math.MaxInt32:
		d.fail(n, path, "must be between %d and %d, got %d", lo, hi, v)
	case v < lo:
		d.fail(n, path, "must be ≥ %d, got %d", lo, v)
	default:
		d.fail(n, path, "must be ≤ %d, got %d", hi, v)
	}
	return 0, false
}

const noMax = math.MaxInt64

// int sets an int in [lo, hi] (hi capped at MaxInt32 so it fits any int).
func (d *decoder) int(dst *int, lo, hi int64) handler {
	hi = min(hi, math.MaxInt32)
	return func(n *yaml.Node, path string) {
		if v, ok := d.integer(n, path, lo, hi); ok {
			*dst = int(v)
		}
	}
}

func (d *decoder) int64(dst *int64, lo int64) handler {
	return func(n *yaml.Node, path string) {
		if v, ok := d.integer(n, path, lo, noMax); ok {
			*dst = v
		}
	}
}

func (d *decoder) float(dst *float64, lo, hi float64) handler {
	return func(n *yaml.Node, path string) {
		s, isNil, ok := d.scalar(n, path, "a number")
		if !ok || isNil {
			return
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			d.fail(n, path, "must be a number, got %s", describe(n))
			return
		}
		if v < lo || v > hi {
			if hi == math.MaxFloat64 {
				d.fail(n, path, "must be ≥ %v, got %v", lo, v)
			} else {
				d.fail(n, path, "must be between %v and %v, got %v", lo, hi, v)
			}
			return
		}
		*dst = v
	}
}

func (d *decoder) bool(dst *bool) handler {
	return func(n *yaml.Node, path string) {
		s, isNil, ok := d.scalar(n, path, "true or false")
		if !ok || isNil {
			return
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes", "on":
			*dst = true
		case "false", "no", "off":
			*dst = false
		default:
			d.fail(n, path, "must be true or false, got %s", describe(n))
		}
	}
}

// duration accepts a Go duration ("30s", "1m30s") or a number of seconds.
// positive demands > 0; otherwise ≥ 0.
func (d *decoder) duration(dst *time.Duration, positive bool) handler {
	return func(n *yaml.Node, path string) {
		s, isNil, ok := d.scalar(n, path, "a duration")
		if !ok || isNil {
			return
		}
		v, err := parseDuration(s)
		if err != nil {
			d.fail(n, path, "must be a duration like \"30s\" or a number of seconds, got %s", describe(n))
			return
		}
		switch {
		case positive && v <= 0:
			d.fail(n, path, "must be > 0, got %s", v)
		case v < 0:
			d.fail(n, path, "must be ≥ 0, got %s", v)
		default:
			*dst = v
		}
	}
}

// ParseDuration reads a Go duration string ("30s") or a number of seconds
// ("30", "1.5"), as the config's duration keys do.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s) }

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > float64(math.MaxInt64)/float64(time.Second) {
			return 0, fmt.Errorf("duration %q out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

var sizeRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
}

// ParseSize reads a byte size: a plain number of bytes or a number with a
// unit B, KB, MB, GB (or K, M, G, KiB, MiB, GiB; any case). Units are powers
// of 1024, as in Echo's body limit: "4MB" = "4MiB" = 4194304.
func ParseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	mult, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("unknown size unit %q", m[2])
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	v := f * mult
	if v >= 1<<62 {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return int64(v), nil
}

// size sets a byte count (> 0) from ParseSize's syntax.
func (d *decoder) size(set func(int64), hi int64) handler {
	return func(n *yaml.Node, path string) {
		s, isNil, ok := d.scalar(n, path, "a size")
		if !ok || isNil {
			return
		}
		v, err := ParseSize(s)
		if err != nil {
			d.fail(n, path, "must be a size like \"4MB\", \"512KB\" or a number of bytes, got %s", describe(n))
			return
		}
		if v < 1 || v > hi {
			d.fail(n, path, "must be between 1 byte and %d bytes, got %d", hi, v)
			return
		}
		set(v)
	}
}

// strings sets a list of strings; null sets an empty list. Items must not
// be empty when nonEmptyItems (an empty prefix would match everything).
func (d *decoder) strings(dst *[]string, nonEmptyItems bool) handler {
	return func(n *yaml.Node, path string) {
		n = d.collection(n, path)
		if isNull(n) {
			*dst = nil
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "must be a list of strings, got %s", describe(n))
			return
		}
		out := make([]string, 0, len(n.Content))
		good := true
		for i, item := range n.Content {
			ip := fmt.Sprintf("%s[%d]", path, i)
			s, isNil, ok := d.scalar(item, ip, "a string")
			if !ok {
				good = false
				continue
			}
			if nonEmptyItems && (isNil || s == "") {
				d.fail(resolve(item), ip, "must not be empty")
				good = false
				continue
			}
			out = append(out, s)
		}
		if good {
			if len(out) == 0 {
				out = nil // [] and null both mean "none"
			}
			*dst = out
		}
	}
}

// prompt sets a prompt override that must contain each placeholder; an
// empty value means "the built-in prompt".
func (d *decoder) prompt(dst *string, placeholders ...string) handler {
	return func(n *yaml.Node, path string) {
		s, _, ok := d.scalar(n, path, "a string")
		if !ok {
			return
		}
		var missing []string
		for _, p := range placeholders {
			if s != "" && !strings.Contains(s, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			d.fail(resolve(n), path, "missing placeholder %s", strings.Join(missing, " and "))
			return
		}
		*dst = s
	}
}

// hostPort sets a host:port address (port required, no URL scheme). An
// empty value is accepted when optional (a cross check decides whether it
// is needed).
func (d *decoder) hostPort(dst *string, allowEmptyHost, optional bool) handler {
	return func(n *yaml.Node, path string) {
		s, _, ok := d.scalar(n, path, "an address host:port")
		if !ok {
			return
		}
		if s == "" && optional {
			*dst = ""
			return
		}
		if msg := checkHostPort(s, allowEmptyHost); msg != "" {
			d.fail(resolve(n), path, "%s", msg)
			return
		}
		*dst = s
	}
}

func checkHostPort(s string, allowEmptyHost bool) string {
	if s == "" {
		return "must not be empty"
	}
	if strings.Contains(s, "://") {
		return "must be host:port without a scheme (e.g. \"localhost:6334\")"
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "must be host:port (e.g. \":8080\" or \"localhost:6334\")"
	}
	if host == "" && !allowEmptyHost {
		return "needs a host (e.g. \"localhost:6334\")"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "port must be a number from 0 to 65535"
	}
	return ""
}

// LoopbackAddr reports whether a listen address host:port is reachable
// from this machine only: localhost or a loopback IP. An empty host, as
// in ":8080", is every interface.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// hostNames sets a list of host names as a Host header carries them,
// without scheme, port or path; a leading "." matches subdomains.
func (d *decoder) hostNames(dst *[]string) handler {
	return func(n *yaml.Node, path string) {
		var raw []string
		d.strings(&raw, true)(n, path)
		for i, h := range raw {
			if strings.ContainsAny(h, ":/ \t") || strings.Trim(h, ".") == "" {
				d.fail(resolve(n.Content[i]), fmt.Sprintf("%s[%d]", path, i), "must be a host name like \"contextd\" or \".example.com\" (no scheme, port or path), got %q", h)
			}
		}
		*dst = raw
	}
}

// url sets an http(s) base URL.
func (d *decoder) url(dst *string) handler {
	return func(n *yaml.Node, path string) {
		s, _, ok := d.scalar(n, path, "a URL")
		if !ok {
			return
		}
		if s != "" {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.fail(resolve(n), path, "must be an http:// or https:// URL")
				return
			}
		}
		*dst = s
	}
}

// cidrs sets a list of CIDR prefixes; a bare IP is taken as a single host
// (/32 or /128) and stored as such.
func (d *decoder) cidrs(dst *[]string) handler {
	return func(n *yaml.Node, path string) {
		var raw []string
		before := len(d.problems)
		d.strings(&raw, false)(n, path) // empty items are reported below, with the others
		if len(d.problems) > before {
			return
		}
		seq := resolve(n)
		var out []string
		good := true
		for i, s := range raw {
			s = strings.TrimSpace(s)
			if s == "" {
				d.fail(resolve(seq.Content[i]), fmt.Sprintf("%s[%d]", path, i), "must not be empty")
				good = false
				continue
			}
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, p.Masked().String())
				continue
			}
			if a, err := netip.ParseAddr(s); err == nil {
				out = append(out, netip.PrefixFrom(a, a.BitLen()).String())
				continue
			}
			d.fail(resolve(seq.Content[i]), fmt.Sprintf("%s[%d]", path, i), "must be a CIDR like \"10.0.0.0/8\" or an IP address")
			good = false
		}
		if good {
			*dst = out
		}
	}
}
