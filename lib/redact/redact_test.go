package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

const (
	upperDigitsSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnumSet       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64Set         = alnumSet + "+/"
	urlsafeSet     = alnumSet + "_-"
)

// fake returns n deterministic characters from set (fake secrets are
// built at run time so that no secret-shaped string sits in the source).
func fake(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

type secret struct {
	kind, value string
}

func secrets() []secret {
	r := rand.New(rand.NewPCG(1, 2))
	pem := func(kind string) string {
		return "-----BEGIN " + kind + "PRIVATE KEY-----\n" + fake(r, b64Set, 64) + "\n" + fake(r, b64Set, 64) + "\n-----END " + kind + "PRIVATE KEY-----"
	}
	return []secret{
		{"private-key", pem("RSA ")},
		{"private-key", pem("OPENSSH ")},
		{"private-key", pem("EC ")},
		{"private-key", pem("")},
		{"aws-access-key-id", "AKIA" + fake(r, upperDigitsSet, 16)},
		{"aws-access-key-id", "ASIA" + fake(r, upperDigitsSet, 16)},
		{"aws-secret-key", "aws_secret_access_key = " + fake(r, b64Set, 40)},
		{"aws-secret-key", `AWS_SECRET_ACCESS_KEY="` + fake(r, b64Set, 40) + `"`},
		{"github-token", "ghp_" + fake(r, alnumSet, 36)},
		{"github-token", "gho_" + fake(r, alnumSet, 36)},
		{"github-token", "ghu_" + fake(r, alnumSet, 36)},
		{"github-token", "ghs_" + fake(r, alnumSet, 36)},
		{"github-token", "ghr_" + fake(r, alnumSet, 36)},
		{"github-token", "github_pat_" + fake(r, alnumSet, 22) + "_" + fake(r, alnumSet, 59)},
		{"gitlab-token", "glpat-" + fake(r, urlsafeSet, 20)},
		{"slack-token", "xoxb-" + fake(r, "0123456789", 12) + "-" + fake(r, "0123456789", 13) + "-" + fake(r, alnumSet, 24)},
		{"slack-token", "xoxp-" + fake(r, "0123456789", 12) + "-" + fake(r, alnumSet, 30)},
		{"slack-token", "xoxa-2-" + fake(r, alnumSet, 30)},
		{"slack-token", "xoxr-" + fake(r, alnumSet, 30)},
		{"slack-token", "xoxs-" + fake(r, alnumSet, 30)},
		{"slack-webhook", "https://hooks.slack.com/services/T" + fake(r, upperDigitsSet, 8) + "/B" + fake(r, upperDigitsSet, 8) + "/" + fake(r, alnumSet, 24)},
		{"stripe-key", "sk_live_" + fake(r, alnumSet, 24)},
		{"stripe-key", "rk_live_" + fake(r, alnumSet, 24)},
		{"openai-key", "sk-" + fake(r, alnumSet, 48)},
		{"openai-key", "sk-proj-" + fake(r, urlsafeSet, 64)},
		{"openai-key", "sk-svcacct-" + fake(r, urlsafeSet, 64)},
		{"anthropic-key", "sk-ant-api03-" + fake(r, urlsafeSet, 80)},
		{"anthropic-key", "sk-ant-admin01-" + fake(r, urlsafeSet, 60)},
		{"google-api-key", "AIza" + fake(r, urlsafeSet, 35)},
		{"npm-token", "npm_" + fake(r, alnumSet, 36)},
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + fake(r, urlsafeSet, 40) + "." + fake(r, urlsafeSet, 43)},
		{"jwt", "eyJ" + fake(r, urlsafeSet, 20) + ".eyJ" + fake(r, urlsafeSet, 60) + "." + fake(r, urlsafeSet, 86)},
		{"credential", "password=" + fake(r, alnumSet, 10) + "7x"},
		{"credential", `PASSWORD: "` + fake(r, alnumSet, 14) + `9"`},
		{"credential", "token=" + fake(r, alnumSet, 30) + "1"},
		{"credential", "api_key = '" + fake(r, alnumSet, 32) + "2'"},
		{"credential", "client_secret=" + fake(r, alnumSet, 24) + "3"},
		{"credential", "DB_PASSWORD=" + fake(r, alnumSet, 16) + "4!"},
		{"credential", `"access_token": "` + fake(r, urlsafeSet, 40) + `5"`},
		{"credential", "secret: " + fake(r, alnumSet, 20) + "6"},
		{"credential", "refresh_token=" + fake(r, alnumSet, 40) + "8"},
		{"credential", "PGPASSWORD=" + fake(r, alnumSet, 9) + "1"},
		{"credential", "MYSQL_PWD=" + fake(r, alnumSet, 9) + "2"},
		{"credential", "DBPASSWD=" + fake(r, alnumSet, 9) + "3"},
		{"credential", "DB_PASSWORD=" + fake(r, alnumSet, 2) + "4#" + fake(r, alnumSet, 3) + "$" + fake(r, alnumSet, 3) + "&" + fake(r, alnumSet, 4)},
		{"url-password", "postgres://admin:" + fake(r, alnumSet, 12) + "@db.example.com:5432/app"},
		{"url-password", "mysql://root:" + fake(r, alnumSet, 10) + "@localhost/shop"},
		{"url-password", "redis://:" + fake(r, alnumSet, 16) + "@cache.internal:6379/0"},
		{"url-password", "https://deploy:" + fake(r, alnumSet, 14) + "@git.example.com/org/repo.git"},
		{"url-password", "amqp+ssl://guest:" + fake(r, alnumSet, 8) + "#x@mq:5671"},
	}
}

// embed puts a secret in prose, in code and in a URL.
func embeds(s string) []string {
	return []string{
		"why does this fail with " + s + " when I run the deploy?",
		"```\nexport X=1\n" + s + "\nmake deploy\n```\nfix the script",
		"curl 'https://api.example.com/v1/items?x=1&" + strings.ReplaceAll(s, " ", "") + "&y=2' returns 401",
	}
}

func TestSecretsRedacted(t *testing.T) {
	ss := secrets()
	if len(ss) < 40 {
		t.Fatalf("corpus has %d secrets, want at least 40", len(ss))
	}
	n := 0
	for _, s := range ss {
		texts := embeds(s.value)
		if strings.Contains(s.value, "\n") {
			texts = texts[:2] // a multi-line block does not sit in a URL
		}
		for _, text := range texts {
			n++
			got := Text(text)
			if !strings.Contains(got, "[REDACTED:"+s.kind+"]") {
				t.Errorf("%s not redacted as %s:\n%s\n->\n%s", s.kind, s.kind, text, got)
				continue
			}
			// No long run of the secret's characters survives.
			core := s.value
			switch {
			case s.kind == "url-password":
				core = core[strings.Index(core, "://")+3:]
				core = core[strings.IndexByte(core, ':')+1 : strings.LastIndexByte(core, '@')]
			case s.kind != "private-key" && s.kind != "slack-webhook":
				if i := strings.LastIndexAny(core, "=: \"'"); i >= 0 {
					core = strings.Trim(core[i+1:], `"'`)
				}
			}
			if len(core) >= 12 && strings.Contains(got, core[len(core)-12:]) {
				t.Errorf("%s: part of the secret survives: %s", s.kind, got)
			}
			if Text(got) != got {
				t.Errorf("%s: redaction is not idempotent: %q -> %q", s.kind, got, Text(got))
			}
		}
	}
	t.Logf("%d secrets in %d texts redacted", len(ss), n)
}

func TestKeepsTheRest(t *testing.T) {
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	got := Text("push with " + tok + " then open the PR")
	if got != "push with [REDACTED:github-token] then open the PR" {
		t.Fatalf("got %q", got)
	}
}

func ordinary() []string {
	r := rand.New(rand.NewPCG(3, 4))
	hex := "0123456789abcdef"
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	add(
		"fix the flaky test in store_test.go",
		"refactor the token parser so it handles nested quotes",
		"the password field on the login form should show a strength meter",
		"rename api_key to apiKey everywhere in the TypeScript client",
		"token = self.next_token_value()",
		"password = os.environ['DB_PASSWORD']",
		"const token = await getToken(user.id)",
		"if secret == nil { return errNoSecret }",
		"set token: string | undefined in the Props type",
		"why does `git log --oneline` show 2f3a9c1 twice?",
		"explain what the key: value pairs in this YAML mean",
		"api_key: ${{ secrets.OPENAI_API_KEY }}",
		"password: ${DB_PASSWORD}",
		"token=$(cat ~/.config/token)",
		"the skeleton loader flickers on the dashboard",
		"ask-for-review label should be added by the bot",
		"desk-1234 is the Jira ticket for this",
		"add a task-runner for the sk-learn pipeline",
		"use the mask-rcnn model from torchvision",
		"move the Dockerfile to build/ and update the compose file",
		"what does AKIA mean in an AWS key id?",
		"the secret sauce is in lib/store/append.go",
		"write a JWT verifier that rejects tokens signed with none",
		"base64 image: data:image/png;base64,<omitted>",
		"[Image #1] what is wrong with this screenshot?",
		"explain the difference between xoxb and xoxp slack tokens",
		"npm_config_cache should point to /tmp/npm",
		"why does eyJ appear at the start of every JWT?",
		"the build-key for the cache is go-mod-${{ hashFiles('go.sum') }}",
		"passwordless login via magic link",
		"generate a token bucket rate limiter in Go",
		"key=value pairs are separated by ampersands",
		"primary_key = models.AutoField(primary_key=True)",
		"sort the keys: apple, banana, cherry",
		"-----BEGIN CERTIFICATE----- blocks are public; where do we load them?",
		"the ssh public key starts with ssh-ed25519 AAAAC3NzaC1lZDI1NTE5",
		"sk-learn is not the right package name; it's scikit-learn",
		"token_type=Bearer and expires_in=3600 in the response",
		"open https://example.com/docs/v2/install?lang=en#setup",
		"clone ssh://git@github.com/org/repo.git and git@github.com:org/repo.git",
		"copy it with scp build.tar.gz deploy@host:/tmp/ and ssh user@host",
		"the API is at http://localhost:8080/api?user=me@example.com",
		"connect to postgres://localhost:5432/app as the current user",
		"https://user@example.com/ asks for a password",
		"write to mailto:someone@example.com for access",
		"a URL like scheme://user:password@host is what the parser handles",
		"cd back with OLDPWD=/home/dev/proj2024 set by the shell",
		"PWD=/srv/app/release2024 is where it runs",
		"the password field is required: validation fails",
	)
	for i := 0; i < 40; i++ {
		add(fmt.Sprintf("revert commit %s and cherry-pick %s", fake(r, hex, 40), fake(r, hex, 7)))
	}
	for i := 0; i < 30; i++ {
		add(fmt.Sprintf("session %s-%s-%s-%s-%s crashed at step %d", fake(r, hex, 8), fake(r, hex, 4), fake(r, hex, 4), fake(r, hex, 4), fake(r, hex, 12), i))
	}
	for i := 0; i < 30; i++ {
		add(fmt.Sprintf("open /home/dev/src/app-%d/internal/handlers/user_%d.go and add a test for the 404 path", i, i))
	}
	for i := 0; i < 30; i++ {
		add(fmt.Sprintf("the sha256 of the release tarball should be %s", fake(r, hex, 64)))
	}
	for i := 0; i < 30; i++ {
		add(fmt.Sprintf("func handle%d(w http.ResponseWriter, r *http.Request) {\n\tkey := r.URL.Query().Get(\"k%d\")\n\tfmt.Fprintln(w, key)\n}\nwhy is key empty?", i, i))
	}
	for i := 0; i < 20; i++ {
		add(fmt.Sprintf("docker run -e LOG_LEVEL=debug -p %d:8080 app:%d.%d", 8000+i, i, i+1))
	}
	return out
}

func TestNoFalsePositives(t *testing.T) {
	ps := ordinary()
	if len(ps) < 200 {
		t.Fatalf("corpus has %d prompts, want at least 200", len(ps))
	}
	for _, p := range ps {
		if got := Text(p); got != p {
			t.Errorf("false positive:\n%s\n->\n%s", p, got)
		}
	}
	t.Logf("%d ordinary prompts, none changed", len(ps))
}

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "on": true, "0": false, " OFF ": false, "false": false, "no": false, "x": true} {
		if Enabled(v) != want {
			t.Errorf("Enabled(%q) = %v", v, !want)
		}
	}
}

func BenchmarkRedact1MB(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("the key to this function is the token bucket; see line ")
		sb.WriteString(fake(r, "0123456789", 4))
		sb.WriteString(" of handler.go where password handling happens\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Text(text)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range secrets() {
		f.Add(embeds(s.value)[0])
	}
	for _, p := range ordinary()[:20] {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Text(text)
		if Text(got) != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", text, got, Text(got))
		}
	})
}

// BenchmarkRedact1MBHints is a 1 MB prompt in which every rule's literal
// hint occurs often, so every rule's matcher runs over the whole text.
func BenchmarkRedact1MBHints(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("a task-runner with xoxo hugs, eyJ is base64 for {\", npm_x, AIza? AKIA! glpat- ghp_ gho_ sk_live_ hooks.slack.com github_pat_ sk-ant- PRIVATE KEY----- ")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Text(text)
	}
}

// BenchmarkRedact1MBCode is a 1 MB prompt of code: snake_case names,
// flags and colons everywhere, the anchors the fast path skips to.
func BenchmarkRedact1MBCode(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("def read_config(path: str) -> dict:\n    run(['git', '--no-pager', 'log', '-n', '1'])\n    return {'max_items': 10, 'user_name': name}\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Text(text)
	}
}
