package redact

import (
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// adversarial lists, for each rule, a trigger that repeated makes a token
// or an assignment start over and over: a prefix followed by a byte that
// lets the next copy start a word, inside a run of the rule's body
// characters where the rule allows it ("eyJ-", "key=").
var adversarial = []struct{ rule, unit string }{
	{"private-key", "-----BEGIN "},
	{"private-key-body", "-----BEGIN PRIVATE KEY-----\n-----END "},
	{"private-key-end", "-----BEGIN PRIVATE KEY-----"},
	{"aws-access-key-id", "AKIA-"},
	{"github-token", "ghp_-"},
	{"github-pat", "github_pat_-"},
	{"gitlab-token", "glpat-"},
	{"slack-webhook", "https://hooks.slack.com/services/"},
	{"slack-token", "xoxb-"},
	{"stripe-key", "sk_live_-"},
	{"anthropic-key", "sk-ant-"},
	{"openai-key", "sk-"},
	{"google-api-key", "AIza-"},
	{"npm-token", "npm_-"},
	{"jwt", "eyJ-"},
	{"jwt-parts", "eyJaaaaaaaa.eyJ-"},
	{"credential", "key="},
	{"credential-colon", `"key": "`},
	{"credential-upper", "API_KEY="},
	{"credential-nested", "a1.key="},
	{"credential-redacted", "token=REDACTED1"},
	{"credential-url", "?key=&key="},
	{"credential-password", "PGPASSWORD="},
	{"url", "a://"},
	{"url-userinfo", "a://b:c@"},
	{"url-colons", "s://:::"},
}

// repeatTo repeats unit to exactly n bytes.
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// realistic is n bytes of mostly-ASCII prose and code with a secret every
// 64 KB or so.
func realistic(n int) string {
	r := rand.New(rand.NewPCG(9, 10))
	ss := secrets()
	paras := []string{
		"Refactor the handler so the retry loop backs off: the key to this is the token bucket in ratelimit.go, line 42.\n",
		"```go\nfunc (s *Server) Serve(ctx context.Context) error {\n\tcfg := s.cfg.Load()\n\treturn s.run(ctx, cfg.MaxItems, \"--no-pager\")\n}\n```\n",
		"Why does `make test` fail with exit status 2 on the CI runner? Here is the log: FAIL hist/lib/store 0.41s — expected 3 entries, got 2.\n",
		"Le résumé doit être court — pas plus de 3 phrases, s'il te plaît. Ça marche?\n",
	}
	var sb strings.Builder
	next := 0
	for sb.Len() < n {
		if sb.Len() >= next {
			sb.WriteString("use " + ss[r.IntN(len(ss))].value + " for it\n")
			next += 64 << 10
		}
		sb.WriteString(paras[r.IntN(len(paras))])
	}
	return sb.String()[:n]
}

// BenchmarkAdversarial redacts each rule's trigger repeated to 64 KB and
// to 1 MB (the same MB/s at both sizes means the cost is linear), and
// realistic text with a few secrets.
func BenchmarkAdversarial(b *testing.B) {
	run := func(name, text string) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Text(text)
			}
		})
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"64KB", 64 << 10}, {"1MB", 1 << 20}} {
		for _, a := range adversarial {
			run(a.rule+"/"+size.name, repeatTo(a.unit, size.n))
		}
		run("realistic/"+size.name, realistic(size.n))
	}
}

// fastest returns the shortest of up to 15 redactions of each text, taken
// in turns so that a busy moment of the machine slows both alike: the
// minimum is what the code costs, whatever else the machine was doing. It
// stops after a second, so that a slow scan fails without running on.
func fastest(a, b string) (ta, tb time.Duration) {
	ta, tb = time.Duration(1<<62), time.Duration(1<<62)
	start := time.Now()
	for range 15 {
		t0 := time.Now()
		Text(a)
		t1 := time.Now()
		Text(b)
		ta, tb = min(ta, t1.Sub(t0)), min(tb, time.Since(t1))
		if time.Since(start) > time.Second {
			break
		}
	}
	return ta, tb
}

// FuzzLinear fails when redaction is not linear: the seed repeated to 16,
// 32, 64, 128 and 256 KB, each size must take less than three times the
// one before (a linear scan takes twice as long, a quadratic one four
// times), give or take five milliseconds, and no redaction may take more
// than a second. A slow pair is measured again before it fails, so one
// busy moment of a shared machine is not a failure. It measures wall
// time, so it runs only with HIST_LONG=1 (or under -fuzz).
func FuzzLinear(f *testing.F) {
	for _, a := range adversarial {
		f.Add(a.unit)
	}
	for _, k := range keywords {
		f.Add(k + "=")
	}
	f.Add("eyJ ")
	f.Add("the quick brown fox ")
	f.Fuzz(func(t *testing.T, seed string) {
		if os.Getenv("HIST_LONG") == "" && !fuzzing() {
			t.Skip("timing check: HIST_LONG=1 runs it")
		}
		if seed == "" {
			return
		}
		const floor = 5 * time.Millisecond
		for n := 16 << 10; n < 256<<10; n *= 2 {
			half, full := repeatTo(seed, n), repeatTo(seed, 2*n)
			for try := 0; ; try++ {
				th, tf := fastest(half, full)
				if tf > time.Second {
					t.Fatalf("%q repeated to %d KB took %v to redact: more than the 1 s deadline", seed, n>>9, tf)
				}
				if tf <= 3*th+floor {
					break
				}
				if try == 1 {
					t.Fatalf("%q repeated to %d KB redacts in %v, to %d KB in %v: more than 3 times as long for twice the text", seed, n>>9, tf, n>>10, th)
				}
			}
		}
	})
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// TestSecretsAfterRepeats checks that what a scan learns from a long run
// of a rule's start does not hide a secret after it: a line of repeats,
// then a line with a secret, redacts as the two lines do alone.
func TestSecretsAfterRepeats(t *testing.T) {
	for _, a := range adversarial {
		if strings.Contains(a.unit, "-----BEGIN") {
			continue // a private key with no END line runs to the end of the text
		}
		repeats := repeatTo(a.unit, 16<<10)
		for _, s := range secrets() {
			line := embeds(s.value)[0]
			if got, want := Text(repeats+"\n"+line), Text(repeats)+"\n"+Text(line); got != want {
				tail := func(s string) string { return s[max(0, len(s)-2*len(line)):] }
				t.Errorf("%s then %s: got ...%q, want ...%q", a.rule, s.kind, tail(got), tail(want))
			}
		}
	}
}
