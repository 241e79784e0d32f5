// Package redact replaces high-confidence secrets in a prompt with
// "[REDACTED:<kind>]" before it is stored, keeping the rest of the prompt.
//
// It is deterministic (the same text always redacts the same way), so
// identity, duplicates and tombstones work on the redacted text. Every
// scan reads the text a bounded number of times (docs/redaction.md).
package redact

import (
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
	blankT      = table(func(c byte) bool { return c == ' ' || c == '\t' })
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

// tokens finds every rule's tokens in text in one pass: a token starts
// where a rule's prefix does, at the start of a word.
func tokens(text string, spans []span) []span {
	var m memo
	for p := 0; p < len(text); p++ {
		cands := byFirst[text[p]]
		if cands == nil || p > 0 && word(text[p-1]) {
			continue
		}
		for _, c := range cands {
			if !strings.HasPrefix(text[p:], c.prefix) {
				continue
			}
			if e, ok := c.rule.match(text, p, len(c.prefix), &m); ok {
				spans = append(spans, span{p, e, c.rule.kind})
				p = e - 1
				break
			}
		}
	}
	return spans
}

// urlPasswords finds the password of every URL that holds one, whatever
// its scheme: "scheme://user:PASSWORD@host/…", "redis://:PASSWORD@host".
// The authority ends at the first "/", "?", quote or white space (not at
// "#": passwords pasted unencoded hold it); its last "@" ends the user's
// part, whose first ":" starts the password. A URL without a password,
// user@host, and a placeholder ("password", "$PASS", "<pw>", "***") are
// left alone. Each authority ends before the next "://" starts, so the
// text is read once.
func urlPasswords(text string, spans []span) []span {
	for q := 0; ; {
		i := strings.Index(text[q:], "://")
		if i < 0 {
			return spans
		}
		at := q + i
		q = at + 3
		s := at
		for s > 0 && schemeT[text[s-1]] {
			s--
		}
		if s == at || !isLetter(text[s]) || s > 0 && word(text[s-1]) {
			continue
		}
		u := strings.LastIndexByte(text[q:run(text, q, authorityT)], '@')
		if u < 0 {
			continue
		}
		user := text[q : q+u]
		if c := strings.IndexByte(user, ':'); c >= 0 && !placeholder(user[c+1:]) {
			spans = append(spans, span{q + c + 1, q + len(user), "url-password"})
		}
	}
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

var (
	schemeT    = table(func(c byte) bool { return alnum(c) || c == '+' || c == '-' || c == '.' })
	authorityT = table(func(c byte) bool { return strings.IndexByte("/?\"'<>` \t\r\n", c) < 0 })
)

// placeholder reports whether a URL's password is empty or stands for
// one: a word such as "password", a variable, a <name>, or stars.
func placeholder(p string) bool {
	if p == "" || strings.IndexByte("$<{%[", p[0]) >= 0 || strings.Trim(p, "*xX") == "" {
		return true
	}
	for _, w := range []string{"password", "passwd", "pass", "pwd", "secret"} {
		if foldEqual(p, w) {
			return true
		}
	}
	return false
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
	spans := assignments(text, urlPasswords(text, tokens(text, nil)))
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
// (DB_PASSWORD=..., "access_token": "...", api_key = '...'): the whole
// name, or its last word (after "_" or "-"). The first three end a name
// whatever comes before them (PGPASSWORD, MYSQL_PWD), and their values
// may be shorter.
var keywords = []string{"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "key"}

// anyPrefix is how many of keywords end a name whatever precedes them.
const anyPrefix = 3

// Values shorter than these are not taken for secrets.
const (
	minValue         = 12
	minPasswordValue = 8
)

// assignments redacts the values of "name = value" style assignments whose
// name ends in a keyword and whose value looks like a secret. It scans
// linearly, so a large prompt full of the word "key" stays cheap.
func assignments(text string, spans []span) []span {
	// Every assignment has a ":" or "=": start from those and read the
	// name backwards.
	var v valueRun
	last := 0 // the end of the last value redacted
	for q := 0; ; q++ {
		i := strings.IndexAny(text[q:], ":=")
		if i < 0 {
			return spans
		}
		q += i
		// A value that starts inside the last one redacted ends where it
		// does ("key=a1.key=a1.key=…"): Text would keep only the first.
		if sp, ok := assignmentAt(text, q, &v); ok && sp.s >= last {
			spans = append(spans, sp)
			last = sp.e
		}
	}
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
	for start > 0 && end-start <= maxName && (word(text[start-1]) || text[start-1] == '-') {
		start--
	}
	if start == end || end-start > maxName {
		return span{}, false
	}
	name := text[start:end]
	kw, least := "", minValue
	for i, k := range keywords {
		if n := len(name) - len(k); n >= 0 && foldEqual(name[n:], k) && (i < anyPrefix || n == 0 || name[n-1] == '_' || name[n-1] == '-') {
			kw = k
			if i < anyPrefix {
				least = minPasswordValue
			}
			break
		}
	}
	if kw == "" {
		return span{}, false
	}
	vs, ok := valueStart(text, end)
	if !ok || vs < len(text) && (text[vs] == '/' || text[vs] == '~') {
		return span{}, false // a path (PWD=/home/…), not a secret
	}
	ve := v.read(text, vs)
	credential := func() bool { return v.credential(vs) }
	if start > 0 && (text[start-1] == '?' || text[start-1] == '&') {
		// A URL's query parameter: its value ends at the next "&".
		if i := strings.IndexByte(text[vs:ve], '&'); i >= 0 {
			ve = vs + i
			credential = func() bool { return looksSecret(text[vs:ve]) }
		}
	}
	if ve-vs < least {
		return span{}, false
	}
	if (kw == "secret" || kw == "key") && ve-vs == 40 && strings.Contains(strings.ToLower(name), "aws") {
		return span{vs, ve, "aws-secret-key"}, true
	}
	if !credential() {
		return span{}, false
	}
	return span{vs, ve, "credential"}, true
}

// looksSecret is valueRun.credential for one value read on its own.
func looksSecret(v string) bool {
	var r valueRun
	e := r.read(v, 0)
	return e == len(v) && r.credential(0)
}

// valueStart finds where the value after a name ending at i starts: past
// an optional quote, spaces, ":" or "=", spaces and an optional quote.
func valueStart(text string, i int) (int, bool) {
	quote := func(i int) int {
		if i < len(text) && (text[i] == '"' || text[i] == '\'') {
			i++
		}
		return i
	}
	i = run(text, quote(i), blankT)
	if i >= len(text) || (text[i] != ':' && text[i] != '=') {
		return 0, false
	}
	return quote(run(text, i+1, blankT)), true
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
			v.punct = i // one of +/=!@#$%^&*~-
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

var valueT = table(func(c byte) bool { return word(c) || strings.IndexByte("-+/=.~!@#$%^&*", c) >= 0 })

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

// Changed reports whether Text would change text.
func Changed(text string) bool { return Text(text) != text }
