// Package redact replaces high-confidence secrets in a prompt with
// "[REDACTED:<kind>]" before it is stored, keeping the rest of the prompt.
//
// It is deterministic (the same text always redacts the same way), so
// identity, duplicates and tombstones work on the redacted text. Each rule
// runs only when a cheap literal test says it could match, so a large
// prompt with no secret costs a few substring scans.
package redact

import (
	"regexp"
	"slices"
	"strings"
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
// that (PEM blocks, JWTs, webhook URLs) add an expression that is matched
// anchored at the prefix, so its cost is the length of the token, never
// the length of the prompt.
type rule struct {
	kind     string
	prefixes []string
	body     func(c byte) bool
	min, max int  // body length bounds (max 0: unbounded)
	exact    bool // the body may not run on past max (AWS ids, Google keys)
	re       *regexp.Regexp
	// skip says a token at this position belongs to another rule.
	skip func(rest string) bool
}

func alnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}
func upperDigit(c byte) bool { return ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') }
func word(c byte) bool       { return alnum(c) || c == '_' }
func urlsafe(c byte) bool    { return alnum(c) || c == '_' || c == '-' }
func dashed(c byte) bool     { return alnum(c) || c == '-' }

var rules = []rule{
	{kind: "private-key", prefixes: []string{"-----BEGIN"},
		re: regexp.MustCompile(`\A-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)`)},
	{kind: "aws-access-key-id", prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, body: upperDigit, min: 16, max: 16, exact: true},
	{kind: "github-token", prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: alnum, min: 36, max: 255, exact: true},
	{kind: "github-token", prefixes: []string{"github_pat_"}, body: word, min: 22, max: 255, exact: true},
	{kind: "gitlab-token", prefixes: []string{"glpat-"}, body: urlsafe, min: 20},
	{kind: "slack-webhook", prefixes: []string{"https://hooks.slack.com/"},
		re: regexp.MustCompile(`\Ahttps://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}`)},
	{kind: "slack-token", prefixes: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"}, body: dashed, min: 10},
	{kind: "stripe-key", prefixes: []string{"sk_live_", "rk_live_"}, body: alnum, min: 20, exact: true},
	{kind: "anthropic-key", prefixes: []string{"sk-ant-"}, body: urlsafe, min: 20},
	{kind: "openai-key", prefixes: []string{"sk-"}, body: urlsafe, min: 20,
		skip: func(rest string) bool { return strings.HasPrefix(rest, "sk-ant-") }},
	{kind: "google-api-key", prefixes: []string{"AIza"}, body: urlsafe, min: 35, max: 35, exact: true},
	{kind: "npm-token", prefixes: []string{"npm_"}, body: alnum, min: 36, max: 36, exact: true},
	{kind: "jwt", prefixes: []string{"eyJ"},
		re: regexp.MustCompile(`\AeyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
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

// startsAt[b<<8|c] is true when a token may start at a byte c that
// follows b: c begins a rule's prefix and b is not a word byte ("task-runner"
// holds no "sk-..."). One load per byte: most bytes of a prompt are in the
// middle of a word or cannot begin a prefix.
var startsAt [1 << 16]bool

// pairs[c<<8|d] is true when some rule's prefix starts with c, d.
var pairs [1 << 16]bool

func init() {
	for b := range 256 {
		for c := range 256 {
			startsAt[b<<8|c] = byFirst[c] != nil && !word(byte(b))
		}
	}
	for i := range rules {
		for _, p := range rules[i].prefixes {
			if len(p) < 3 {
				panic("redact: a prefix shorter than three bytes: " + p)
			}
			pairs[uint16(p[0])<<8|uint16(p[1])] = true
		}
	}
}

// tokens finds every rule's tokens in text in one pass.
func tokens(text string, spans []span) []span {
	prev := byte(' ') // the start of the text is not inside a word
	for p := 0; p < len(text); p++ {
		c := text[p]
		if !startsAt[uint16(prev)<<8|uint16(c)] {
			prev = c
			continue
		}
		prev = c
		// Every prefix is at least three bytes long: its first two decide
		// most positions at once.
		if p+1 >= len(text) || !pairs[uint16(c)<<8|uint16(text[p+1])] {
			continue
		}
		cands := byFirst[c]
		for _, c := range cands {
			if !strings.HasPrefix(text[p:], c.prefix) {
				continue
			}
			if e, ok := c.rule.match(text, p, len(c.prefix)); ok {
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
	next := 0
	for _, p := range slices.Compact(starts) {
		if p < next {
			continue
		}
		for _, c := range byFirst[text[p]] {
			if !strings.HasPrefix(text[p:], c.prefix) {
				continue
			}
			if e, ok := c.rule.match(text, p, len(c.prefix)); ok {
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
func (r *rule) match(text string, p, n int) (int, bool) {
	if r.skip != nil && r.skip(text[p:]) {
		return 0, false
	}
	if r.re != nil {
		m := r.re.FindStringIndex(text[p:])
		if m == nil {
			return 0, false
		}
		return p + m[1], true
	}
	e := p + n
	for e < len(text) && r.body(text[e]) && (r.max == 0 || e-p-n <= r.max) {
		e++
	}
	body := e - p - n
	if body < r.min || (r.max > 0 && body > r.max) {
		return 0, false
	}
	if r.exact && e < len(text) && (word(text[e]) || text[e] == '-') {
		return 0, false
	}
	return e, true
}

// credentialValue says whether an assignment's value looks like a secret
// rather than code: letters and digits both, and not an expression.
func credentialValue(v string) bool {
	if strings.HasPrefix(v, "[REDACTED:") || strings.Contains(v, "REDACTED") {
		return false
	}
	var letter, digit bool
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
			letter = true
		}
	}
	if !letter || !digit {
		return false
	}
	// "self.token_value1", "os.environ2": identifiers joined by dots are code.
	if strings.Contains(v, ".") && !strings.ContainsAny(v, "+/=!@#$%^*~-") {
		return false
	}
	return true
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
		b.WriteString("[REDACTED:" + sp.kind + "]")
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
		if sp, ok := assignmentAt(text, q); ok {
			spans = append(spans, sp)
		}
		q++
	}
	return spans
}

// assignmentAt reads the name before the ":" or "=" at q and, when it ends
// in a keyword and the value after it looks like a secret, returns the
// value's span.
func assignmentAt(text string, q int) (span, bool) {
	end := q
	for end > 0 && (text[end-1] == ' ' || text[end-1] == '\t') {
		end--
	}
	if end > 0 && (text[end-1] == '"' || text[end-1] == '\'') {
		end--
	}
	start := end
	for start > 0 && (isIdent(text[start-1]) || text[start-1] == '-') {
		start--
	}
	if start == end || end-start > 64 {
		return span{}, false
	}
	name := asciiLower(text[start:end])
	kw := ""
	for _, k := range keywords {
		if strings.HasSuffix(name, k) {
			if n := len(name) - len(k); n == 0 || name[n-1] == '_' || name[n-1] == '-' {
				kw = k
				break
			}
		}
	}
	if kw == "" {
		return span{}, false
	}
	vs, ve, ok := assignedValue(text, end)
	if !ok {
		return span{}, false
	}
	v := text[vs:ve]
	if strings.Contains(name, "aws") && (kw == "secret" || kw == "key") && len(v) == 40 {
		return span{vs, ve, "aws-secret-key"}, true
	}
	if !credentialValue(v) {
		return span{}, false
	}
	return span{vs, ve, "credential"}, true
}

// assignedValue finds the value after a name ending at i: an optional
// quote, spaces, ":" or "=", spaces, an optional quote, then at least 12
// characters of a token.
func assignedValue(text string, i int) (int, int, bool) {
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i >= len(text) || (text[i] != ':' && text[i] != '=') {
		return 0, 0, false
	}
	i++
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	s := i
	for i < len(text) && isValue(text[i]) {
		i++
	}
	return s, i, i-s >= 12
}

func isIdent(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

func isValue(c byte) bool {
	return isIdent(c) || strings.IndexByte("-+/=.~!@#$%^*", c) >= 0
}

// asciiLower lowers ASCII letters only, so byte offsets stay those of text.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Changed reports whether Text would change text.
func Changed(text string) bool { return Text(text) != text }
