package mockmodel

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %s: %s", url, resp.Status, b)
	}
	return resp.Header.Get("Content-Type"), string(b)
}

// dataLines returns the JSON payloads of an SSE stream, [DONE] excluded.
func dataLines(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(stream, "\n") {
		d, ok := strings.CutPrefix(l, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("data line %q: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

func TestShapes(t *testing.T) {
	s := New()
	srv := httptest.NewServer(s)
	defer srv.Close()

	// Chat Completions, streamed: content deltas that add up to Reply, a
	// finish_reason "stop", then [DONE].
	ct, body := post(t, srv.URL+"/v1/chat/completions",
		`{"model":"mock-model","stream":true,"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hello"}]}]}`)
	if ct != "text/event-stream" || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("chat stream: %s %q", ct, body)
	}
	var text, finish string
	for _, m := range dataLines(t, body) {
		c := m["choices"].([]any)[0].(map[string]any)
		if d, ok := c["delta"].(map[string]any)["content"].(string); ok {
			text += d
		}
		if f, ok := c["finish_reason"].(string); ok {
			finish = f
		}
	}
	if text != Reply || finish != "stop" {
		t.Errorf("chat stream text %q finish %q", text, finish)
	}

	// Responses: the event sequence Codex waits for, ending in response.completed.
	_, body = post(t, srv.URL+"/v1/responses",
		`{"model":"mock-model","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"<env>"}]},{"role":"user","content":[{"type":"input_text","text":"typed"}]}]}`)
	var types []string
	text = ""
	for _, m := range dataLines(t, body) {
		types = append(types, m["type"].(string))
		if m["type"] == "response.output_text.delta" {
			text += m["delta"].(string)
		}
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added"
	if got := strings.Join(types, " "); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "response.output_item.done response.completed") || text != Reply {
		t.Errorf("responses events %s, text %q", got, text)
	}

	// Anthropic Messages: message_start … message_stop with an end_turn.
	_, body = post(t, srv.URL+"/v1/messages?beta=true",
		`{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"again"}]}]}`)
	types, text = nil, ""
	for _, m := range dataLines(t, body) {
		types = append(types, m["type"].(string))
		if m["type"] == "content_block_delta" {
			text += m["delta"].(map[string]any)["text"].(string)
		}
	}
	if types[0] != "message_start" || types[len(types)-1] != "message_stop" || text != Reply || !strings.Contains(body, `"stop_reason":"end_turn"`) {
		t.Errorf("anthropic events %v, text %q", types, text)
	}

	// Not streamed: one JSON body.
	_, body = post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`)
	if !strings.Contains(body, `"content":"`+Reply+`"`) {
		t.Errorf("chat without stream: %s", body)
	}

	got := s.Requests()
	lasts := []string{got[0].LastUser, got[1].LastUser, got[2].LastUser, got[3].LastUser}
	if strings.Join(lasts, "|") != "hello|typed|again|q" {
		t.Errorf("recorded last user messages %q", lasts)
	}
	if got[0].Kind != "chat" || got[1].Kind != "responses" || got[2].Kind != "anthropic" || !got[0].Stream || got[3].Stream {
		t.Errorf("recorded %+v", got)
	}
}
