// Package redact replaces high-confidence secrets in a prompt with
// "[REDACTED:<kind>]" before it is stored, keeping the rest of the prompt.
//
// It is deterministic (the same text always redacts the same way), so
// identity, duplicates and tombstones work on the redacted text. Each rule
// runs only when a cheap literal test says it could match, so a large
// prompt with no secret costs a few substring scans.
package redact

import (
	"slices"
	"strings"
	"sync"
)

// EnvVar turns redaction off when it is 0, false or off.
const EnvVar = "GENTLE_PI_HISTORY_REDACT"

// Enabled reports whether redaction is on for an environment value: on
// unless the value is 0, false or off (trimmed, case-insensitive).
func Enabled(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return false
	}
	return true
}

// rule finds one family of tokens: a literal prefix, then a body of
// allowed characters of a bounded length. Rules with a structure beyond
// that (PEM blocks, JWTs, webhook URLs) have their own end function, which
// reads the token and never the rest of the prompt.
type rule struct {
	kind     string
	prefixes []string
	body     *[256]bool
	min, max int  // body length bounds (max 0: unbounded)
	exact    bool // the body may not run on past max (AWS ids, Google keys)
	end      func(text string, p int, m *memo) (int, bool)
	// skip says a token at this position belongs to another rule.
	skip func(rest string) bool
}

// memo is what one scan of a text has learned that later candidates
// reuse, so that overlapping candidates do not read the same bytes again.
type memo struct {
	jwtNone int // no JWT starts before this offset
}

func alnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}
func upperDigit(c byte) bool { return ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') }
func word(c byte) bool       { return alnum(c) || c == '_' }
func urlsafe(c byte) bool    { return alnum(c) || c == '_' || c == '-' }
func dashed(c byte) bool     { return alnum(c) || c == '-' }

// table turns a byte class into a table, one load per byte in the body loop.
func table(class func(c byte) bool) *[256]bool {
	var t [256]bool
	for c := range 256 {
		t[c] = class(byte(c))
	}
	return &t
}

var (
	alnumT      = table(alnum)
	upperDigitT = table(upperDigit)
	wordT       = table(word)
	urlsafeT    = table(urlsafe)
	dashedT     = table(dashed)
	pemT        = table(func(c byte) bool { return upperDigit(c) || c == ' ' })
	webhookT    = table(func(c byte) bool { return urlsafe(c) || c == '/' })
)

// run returns the end of the run of class bytes that starts at i.
func run(text string, i int, class *[256]bool) int {
	for i < len(text) && class[text[i]] {
		i++
	}
	return i
}

var rules = []rule{
	{kind: "private-key", prefixes: []string{"-----BEGIN"}, end: privateKeyEnd},
	{kind: "aws-access-key-id", prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, body: upperDigitT, min: 16, max: 16, exact: true},
	{kind: "github-token", prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: alnumT, min: 36, max: 255, exact: true},
	{kind: "github-token", prefixes: []string{"github_pat_"}, body: wordT, min: 22, max: 255, exact: true},
	{kind: "gitlab-token", prefixes: []string{"glpat-"}, body: urlsafeT, min: 20},
	{kind: "slack-webhook", prefixes: []string{"https://hooks.slack.com/"}, end: slackWebhookEnd},
	{kind: "slack-token", prefixes: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"}, body: dashedT, min: 10},
	{kind: "stripe-key", prefixes: []string{"sk_live_", "rk_live_"}, body: alnumT, min: 20, exact: true},
	{kind: "anthropic-key", prefixes: []string{"sk-ant-"}, body: urlsafeT, min: 20},
	{kind: "openai-key", prefixes: []string{"sk-"}, body: urlsafeT, min: 20,
		skip: func(rest string) bool { return strings.HasPrefix(rest, "sk-ant-") }},
	{kind: "google-api-key", prefixes: []string{"AIza"}, body: urlsafeT, min: 35, max: 35, exact: true},
	{kind: "npm-token", prefixes: []string{"npm_"}, body: alnumT, min: 36, max: 36, exact: true},
	{kind: "jwt", prefixes: []string{"eyJ"}, end: jwtEnd},
}

// privateKeyEnd reads a PEM or OpenSSH private key from its BEGIN line at
// p to the end of its END line, or to the end of the text when there is
// none.
func privateKeyEnd(text string, p int, _ *memo) (int, bool) {
	i, ok := pemLineEnd(text, p+len("-----BEGIN"))
	if !ok {
		return 0, false
	}
	for {
		k := strings.Index(text[i:], "-----END")
		if k < 0 {
			return len(text), true
		}
		if e, ok := pemLineEnd(text, i+k+len("-----END")); ok {
			return e, true
		}
		i += k + 1
	}
}

// pemLineEnd reads the rest of a BEGIN or END line from i: capitals,
// digits and spaces that end in "PRIVATE KEY", then "-----".
func pemLineEnd(text string, i int) (int, bool) {
	const label = "PRIVATE KEY"
	r := run(text, i, pemT)
	if r-i < len(label) || text[r-len(label):r] != label || !strings.HasPrefix(text[r:], "-----") {
		return 0, false
	}
	return r + len("-----"), true
}

// slackWebhookEnd reads a webhook URL: services/, workflows/ or triggers/
// after the host, then 20 or more characters of its path.
func slackWebhookEnd(text string, p int, _ *memo) (int, bool) {
	i := p + len("https://hooks.slack.com/")
	for _, kind := range []string{"services/", "workflows/", "triggers/"} {
		if strings.HasPrefix(text[i:], kind) {
			i += len(kind)
			if e := run(text, i, webhookT); e-i >= 20 {
				return e, true
			}
			return 0, false
		}
	}
	return 0, false
}

// jwtEnd reads a JWT: "eyJ" and 8 or more base64url characters, ".", the
// same again, ".", then 8 or more. Every "eyJ" that starts a word inside
// the first part of one that fails ("eyJ-eyJ-eyJ-…") fails the same way:
// m.jwtNone skips them, so the first part is read once.
func jwtEnd(text string, p int, m *memo) (int, bool) {
	if p < m.jwtNone {
		return 0, false
	}
	i, first := p, 0
	for part := range 3 {
		if part < 2 {
			if !strings.HasPrefix(text[i:], "eyJ") {
				break
			}
			i += 3
		}
		s := i
		i = run(text, i, urlsafeT)
		if part == 0 {
			first = i
		}
		if i-s < 8 {
			break
		}
		if part == 2 {
			return i, true
		}
		if i >= len(text) || text[i] != '.' {
			break
		}
		i++
	}
	m.jwtNone = first
	return 0, false
}

type span struct {
	s, e int
	kind string
}

type candidate struct {
	rule   *rule
	prefix string
}

// byFirst lists, for each byte, the rule prefixes that start with it, so
// tokens reads the prompt once whatever the number of rules.
var byFirst [256][]candidate

func init() {
	for i := range rules {
		for _, p := range rules[i].prefixes {
			byFirst[p[0]] = append(byFirst[p[0]], candidate{&rules[i], p})
		}
	}
}

// tokenTables are tokens' tables. They are built at its first call: a
// capture of a prose prompt, which anchoredTokens reads, never needs their
// 128 KB (building them cost about 0.8 ms of each hist-capture).
var tokenTables = sync.OnceValue(func() *tables {
	t := new(tables)
	for b := range 256 {
		for c := range 256 {
			t.startsAt[b<<8|c] = byFirst[c] != nil && !word(byte(b))
		}
	}
	for i := range rules {
		for _, p := range rules[i].prefixes {
			t.pairs[uint16(p[0])<<8|uint16(p[1])] = true
		}
	}
	return t
})

type tables struct {
	// startsAt[b<<8|c] is true when a token may start at a byte c that
	// follows b: c begins a rule's prefix and b is not a word byte
	// ("task-runner" holds no "sk-..."). One load per byte: most bytes of
	// a prompt are in the middle of a word or cannot begin a prefix.
	startsAt [1 << 16]bool
	// pairs[c<<8|d] is true when some rule's prefix starts with c, d.
	pairs [1 << 16]bool
}

func init() {
	for i := range rules {
		for _, p := range rules[i].prefixes {
			if len(p) < 3 {
				panic("redact: a prefix shorter than three bytes: " + p)
			}
		}
	}
}

// tokens finds every rule's tokens in text in one pass.
func tokens(text string, spans []span) []span {
	t := tokenTables()
	var m memo
	prev := byte(' ') // the start of the text is not inside a word
	for p := 0; p < len(text); p++ {
		c := text[p]
		if !t.startsAt[uint16(prev)<<8|uint16(c)] {
			prev = c
			continue
		}
		prev = c
		// Every prefix is at least three bytes long: its first two decide
		// most positions at once.
		if p+1 >= len(text) || !t.pairs[uint16(c)<<8|uint16(text[p+1])] {
			continue
		}
		cands := byFirst[c]
		for _, c := range cands {
			if !strings.HasPrefix(text[p:], c.prefix) {
				continue
			}
			if e, ok := c.rule.match(text, p, len(c.prefix), &m); ok {
				spans = append(spans, span{p, e, c.rule.kind})
				p = e - 1
				prev = text[p]
				break
			}
		}
	}
	return spans
}

// anchorOrder lists the bytes a prefix is found by, rarest in prose first:
// every prefix holds one of them at a fixed offset.
const anchorOrder = "J_-:A"

// anchored is a prefix and the offset in it of the byte it is found by.
type anchored struct {
	c   candidate
	off int
}

// byAnchor lists, for each anchor byte, the prefixes found by it.
var byAnchor [256][]anchored

var isAnchor = func() (t [256]bool) {
	for _, a := range []byte(anchorOrder) {
		t[a] = true
	}
	return t
}()

func init() {
	for i := range rules {
		for _, p := range rules[i].prefixes {
			off := -1
			for _, a := range []byte(anchorOrder) {
				if off = strings.IndexByte(p, a); off >= 0 {
					break
				}
			}
			if off < 0 {
				panic("redact: no anchor byte in the prefix " + p)
			}
			byAnchor[p[off]] = append(byAnchor[p[off]], anchored{candidate{&rules[i], p}, off})
		}
	}
}

// anchoredTokens finds what tokens finds, by looking only where a prefix
// is: at the occurrences of a few bytes that every prefix holds and prose
// rarely does ('_', '-', 'J', ':', 'A'), each found with a vector search.
// When they are frequent (code), it hands over to tokens, which reads
// every byte.
func anchoredTokens(text string, spans []span) []span {
	// A long text whose start is dense with anchors is code: straight to
	// tokens.
	const sample = 2048
	if len(text) > 4*sample {
		n := 0
		for i := range sample {
			if isAnchor[text[i]] {
				n++
			}
		}
		if n > sample/64 {
			return tokens(text, spans)
		}
	}
	var buf [16]int
	starts := buf[:0]
	budget := len(text)/64 + 8 // anchors looked at before handing over
	for _, a := range []byte(anchorOrder) {
		refs := byAnchor[a]
		for q := 0; q < len(text); q++ {
			i := strings.IndexByte(text[q:], a)
			if i < 0 {
				break
			}
			q += i
			if budget--; budget < 0 {
				return tokens(text, spans)
			}
			for _, r := range refs {
				s := q - r.off
				if s >= 0 && (s == 0 || !word(text[s-1])) && strings.HasPrefix(text[s:], r.c.prefix) {
					starts = append(starts, s)
				}
			}
		}
	}
	if len(starts) == 0 {
		return spans
	}
	slices.Sort(starts)
	// From here, what tokens does at each position where a prefix starts.
	var m memo
	next := 0
	for _, p := range slices.Compact(starts) {
		if p < next {
			continue
		}
		for _, c := range byFirst[text[p]] {
			if !strings.HasPrefix(text[p:], c.prefix) {
				continue
			}
			if e, ok := c.rule.match(text, p, len(c.prefix), &m); ok {
				spans = append(spans, span{p, e, c.rule.kind})
				next = e
				break
			}
		}
	}
	return spans
}

// match reports where the rule's token that starts at p (with a prefix of
// n bytes) ends, if there is one.
func (r *rule) match(text string, p, n int, m *memo) (int, bool) {
	if r.skip != nil && r.skip(text[p:]) {
		return 0, false
	}
	if r.end != nil {
		return r.end(text, p, m)
	}
	// The body is read to its end, or one byte past max: a failed
	// candidate reads at most max+1 bytes, or fewer than min (a body
	// shorter than min is the only way an unbounded rule fails).
	limit := len(text)
	if r.max > 0 {
		limit = min(limit, p+n+r.max+1)
	}
	e := run(text[:limit], p+n, r.body)
	body := e - p - n
	if body < r.min || (r.max > 0 && body > r.max) {
		return 0, false
	}
	if r.exact && e < len(text) && (word(text[e]) || text[e] == '-') {
		return 0, false
	}
	return e, true
}

// Text returns text with every secret replaced by "[REDACTED:<kind>]".
func Text(text string) string {
	spans := assignments(text, anchoredTokens(text, nil))
	if len(spans) == 0 {
		return text
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		if a.s != b.s {
			return a.s - b.s
		}
		return b.e - a.e
	})
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.s < last {
			continue
		}
		b.WriteString(text[last:sp.s])
		b.WriteString("[REDACTED:")
		b.WriteString(sp.kind)
		b.WriteByte(']')
		last = sp.e
	}
	b.WriteString(text[last:])
	return b.String()
}

// keywords end the names of assignments whose value is a secret
// (DB_PASSWORD=..., "access_token": "...", api_key = '...').
var keywords = []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "key"}

// assignments redacts the values of "name = value" style assignments whose
// name ends in a keyword and whose value looks like a secret. It scans
// linearly, so a large prompt full of the word "key" stays cheap.
func assignments(text string, spans []span) []span {
	// Every assignment has a ":" or "=": start from those (found with
	// IndexByte, a vector scan) and read the name backwards, so a prompt
	// without one costs two scans and allocates nothing.
	var v valueRun
	last := 0 // the end of the last value redacted
	colon, eq := -2, -2
	for q := 0; q < len(text); {
		if colon < q && colon != -1 {
			if colon = strings.IndexByte(text[q:], ':'); colon >= 0 {
				colon += q
			}
		}
		if eq < q && eq != -1 {
			if eq = strings.IndexByte(text[q:], '='); eq >= 0 {
				eq += q
			}
		}
		switch {
		case colon < 0 && eq < 0:
			return spans
		case colon < 0 || (eq >= 0 && eq < colon):
			q = eq
		default:
			q = colon
		}
		// A value that starts inside the last one redacted ends where it
		// does ("key=a1.key=a1.key=…"): Text would keep only the first.
		if sp, ok := assignmentAt(text, q, &v); ok && sp.s >= last {
			spans = append(spans, sp)
			last = sp.e
		}
		q++
	}
	return spans
}

// assignmentAt reads the name before the ":" or "=" at q and, when it ends
// in a keyword and the value after it looks like a secret, returns the
// value's span.
func assignmentAt(text string, q int, v *valueRun) (span, bool) {
	end := q
	for end > 0 && (text[end-1] == ' ' || text[end-1] == '\t') {
		end--
	}
	if end > 0 && (text[end-1] == '"' || text[end-1] == '\'') {
		end--
	}
	const maxName = 64
	start := end
	for start > 0 && end-start <= maxName && (isIdent(text[start-1]) || text[start-1] == '-') {
		start--
	}
	if start == end || end-start > maxName {
		return span{}, false
	}
	name := text[start:end]
	kw := ""
	for _, k := range keywords {
		if n := len(name) - len(k); n >= 0 && foldEqual(name[n:], k) && (n == 0 || name[n-1] == '_' || name[n-1] == '-') {
			kw = k
			break
		}
	}
	if kw == "" {
		return span{}, false
	}
	vs, ok := valueStart(text, end)
	if !ok {
		return span{}, false
	}
	ve := v.read(text, vs)
	if ve-vs < 12 {
		return span{}, false
	}
	if (kw == "secret" || kw == "key") && ve-vs == 40 && containsFold(name, "aws") {
		return span{vs, ve, "aws-secret-key"}, true
	}
	if !v.credential(vs) {
		return span{}, false
	}
	return span{vs, ve, "credential"}, true
}

// valueStart finds where the value after a name ending at i starts: past
// an optional quote, spaces, ":" or "=", spaces and an optional quote.
func valueStart(text string, i int) (int, bool) {
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i >= len(text) || (text[i] != ':' && text[i] != '=') {
		return 0, false
	}
	i++
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	return i, true
}

// valueRun is the last run of value characters read, with the last offset
// in it of each kind of character credential asks about. A value is the
// rest of the run from where it starts, so every value that starts inside
// the run ("key=key=key=…") ends with it and is judged without reading it
// again.
type valueRun struct {
	s, e                                int
	letter, digit, dot, punct, redacted int // -1: none
}

// read returns the end of the value that starts at vs.
func (v *valueRun) read(text string, vs int) int {
	if v.s <= vs && vs < v.e {
		return v.e
	}
	*v = valueRun{s: vs, letter: -1, digit: -1, dot: -1, punct: -1}
	i := vs
	for ; i < len(text) && valueT[text[i]]; i++ {
		switch c := text[i]; {
		case '0' <= c && c <= '9':
			v.digit = i
		case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
			v.letter = i
		case c == '.':
			v.dot = i
		case c != '_':
			v.punct = i // one of +/=!@#$%^*~-
		}
	}
	v.e = i
	v.redacted = -1
	for k := vs; ; {
		j := strings.Index(text[k:i], "REDACTED")
		if j < 0 {
			break
		}
		v.redacted = k + j
		k += j + 1
	}
	return i
}

// credential says whether the value from vs to the end of the run looks
// like a secret rather than code: letters and digits both, not already
// redacted, and not identifiers joined by dots ("self.token_value1",
// "os.environ2").
func (v *valueRun) credential(vs int) bool {
	if v.redacted >= vs || v.letter < vs || v.digit < vs {
		return false
	}
	return v.dot < vs || v.punct >= vs
}

func isIdent(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

var valueT = table(func(c byte) bool { return isIdent(c) || strings.IndexByte("-+/=.~!@#$%^*", c) >= 0 })

// foldEqual reports whether a name (letters, digits, '_' and '-') is
// lower, a word in lower-case letters, in any case: setting bit 0x20
// lowers a letter and leaves the other bytes of a name unequal to one.
func foldEqual(name, lower string) bool {
	if len(name) != len(lower) {
		return false
	}
	for i := range len(name) {
		if name[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// containsFold reports whether a name holds lower in any case.
func containsFold(name, lower string) bool {
	for i := 0; i+len(lower) <= len(name); i++ {
		if foldEqual(name[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

// Changed reports whether Text would change text.
func Changed(text string) bool { return Text(text) != text }
