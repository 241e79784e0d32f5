// Package mockmodel is a tiny stand-in for a model provider, used by the
// end-to-end tests that run the real coding agents offline on 127.0.0.1.
//
// It answers every request with one short streamed text reply, in the three
// wire shapes the agents speak:
//
//   - POST /v1/chat/completions: OpenAI Chat Completions (pi, opencode)
//   - POST /v1/responses: OpenAI Responses (Codex 0.171)
//   - POST /v1/messages: Anthropic Messages (Claude Code)
//
// Streaming requests get server-sent events; "stream": false gets one JSON
// body. GET /v1/models lists the one model. Every request is recorded
// (path, model, the last user message) so a test can check what the agent
// actually sent, for example that a prompt template was expanded.
package mockmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Reply is the text every answer carries.
const Reply = "OK, noted."

// Request is what the mock recorded about one call.
type Request struct {
	Method   string `json:"method"`
	Path     string `json:"path"`
	Kind     string `json:"kind"` // chat, responses, anthropic, models, other
	Model    string `json:"model,omitempty"`
	Stream   bool   `json:"stream"`
	LastUser string `json:"last_user,omitempty"`
	UA       string `json:"ua,omitempty"`
}

// Server is an http.Handler that answers as a model and records requests.
type Server struct {
	// Log, when set, receives one JSON line per request.
	Log io.Writer

	mu   sync.Mutex
	reqs []Request
	seq  int
}

// New returns a mock model.
func New() *Server { return &Server{} }

// Requests returns a copy of what was recorded so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	s.seq++
	if s.Log != nil {
		b, _ := json.Marshal(r)
		s.Log.Write(append(b, '\n'))
	}
	return s.seq
}

// body is the union of the request fields the mock looks at.
type body struct {
	Model    string            `json:"model"`
	Stream   *bool             `json:"stream"`
	Messages []json.RawMessage `json:"messages"`
	Input    json.RawMessage   `json:"input"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	req := Request{Method: r.Method, Path: r.URL.RequestURI(), UA: r.Header.Get("User-Agent")}
	if r.Method == http.MethodGet && strings.HasSuffix(path, "/models") {
		req.Kind = "models"
		s.record(req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"id":"mock-model","object":"model","created":%d,"owned_by":"mock"}]}`, time.Now().Unix())
		return
	}
	if r.Method != http.MethodPost {
		req.Kind = "other"
		s.record(req)
		http.Error(w, `{"error":{"message":"not found","type":"not_found"}}`, http.StatusNotFound)
		return
	}
	data, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var b body
	_ = json.Unmarshal(data, &b)
	req.Model = b.Model
	req.Stream = b.Stream != nil && *b.Stream
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		req.Kind = "chat"
		req.LastUser = lastUser(b.Messages)
	case strings.HasSuffix(path, "/responses"):
		req.Kind = "responses"
		var items []json.RawMessage
		if json.Unmarshal(b.Input, &items) == nil {
			req.LastUser = lastUser(items)
		} else {
			var s string
			if json.Unmarshal(b.Input, &s) == nil {
				req.LastUser = s
			}
		}
	case strings.HasSuffix(path, "/messages/count_tokens"):
		req.Kind = "count_tokens"
		s.record(req)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":10}`)
		return
	case strings.HasSuffix(path, "/messages"):
		req.Kind = "anthropic"
		req.LastUser = lastUser(b.Messages)
	default:
		req.Kind = "other"
		s.record(req)
		http.Error(w, `{"error":{"message":"not found","type":"not_found"}}`, http.StatusNotFound)
		return
	}
	n := s.record(req)
	model := b.Model
	if model == "" {
		model = "mock-model"
	}
	id := fmt.Sprintf("%d%06d", time.Now().Unix(), n)
	switch req.Kind {
	case "chat":
		chat(w, req.Stream, model, id)
	case "responses":
		responses(w, req.Stream, model, id)
	case "anthropic":
		anthropic(w, req.Stream, model, id)
	}
}

// lastUser returns the text of the last message with role "user".
func lastUser(msgs []json.RawMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(msgs[i], &m) != nil || m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			var texts []string
			for _, p := range parts {
				if p.Text != "" {
					texts = append(texts, p.Text)
				}
			}
			return strings.Join(texts, "\n")
		}
	}
	return ""
}

// words splits the reply into a few deltas, so clients see a real stream.
func words() []string {
	f := strings.SplitAfter(Reply, " ")
	return f
}

type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w, f}
}

// event writes one SSE event; name "" writes a bare data line.
func (s *sse) event(name string, v any) {
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	switch v := v.(type) {
	case string:
		fmt.Fprintf(s.w, "data: %s\n\n", v)
	default:
		b, _ := json.Marshal(v)
		fmt.Fprintf(s.w, "data: %s\n\n", b)
	}
	if s.f != nil {
		s.f.Flush()
	}
}

type obj = map[string]any

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func chat(w http.ResponseWriter, stream bool, model, id string) {
	created := time.Now().Unix()
	usage := obj{"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
	if !stream {
		writeJSON(w, obj{
			"id": "chatcmpl-" + id, "object": "chat.completion", "created": created, "model": model,
			"choices": []obj{{"index": 0, "message": obj{"role": "assistant", "content": Reply}, "finish_reason": "stop"}},
			"usage":   usage,
		})
		return
	}
	s := newSSE(w)
	chunk := func(delta obj, finish any, extra obj) obj {
		c := obj{
			"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	s.event("", chunk(obj{"role": "assistant", "content": ""}, nil, nil))
	for _, wd := range words() {
		s.event("", chunk(obj{"content": wd}, nil, nil))
	}
	s.event("", chunk(obj{}, "stop", obj{"usage": usage}))
	s.event("", "[DONE]")
}

func responses(w http.ResponseWriter, stream bool, model, id string) {
	created := time.Now().Unix()
	respID, msgID := "resp_"+id, "msg_"+id
	part := obj{"type": "output_text", "text": Reply, "annotations": []any{}}
	item := obj{"id": msgID, "type": "message", "status": "completed", "role": "assistant", "content": []obj{part}}
	usage := obj{
		"input_tokens": 10, "input_tokens_details": obj{"cached_tokens": 0},
		"output_tokens": 4, "output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 14,
	}
	resp := func(status string, output []obj, u any) obj {
		return obj{"id": respID, "object": "response", "created_at": created, "status": status,
			"model": model, "output": output, "usage": u}
	}
	if !stream {
		writeJSON(w, resp("completed", []obj{item}, usage))
		return
	}
	s := newSSE(w)
	seq := 0
	ev := func(name string, fields obj) {
		fields["type"] = name
		fields["sequence_number"] = seq
		seq++
		s.event(name, fields)
	}
	ev("response.created", obj{"response": resp("in_progress", []obj{}, nil)})
	ev("response.in_progress", obj{"response": resp("in_progress", []obj{}, nil)})
	ev("response.output_item.added", obj{"output_index": 0,
		"item": obj{"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []obj{}}})
	ev("response.content_part.added", obj{"item_id": msgID, "output_index": 0, "content_index": 0,
		"part": obj{"type": "output_text", "text": "", "annotations": []any{}}})
	for _, wd := range words() {
		ev("response.output_text.delta", obj{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": wd})
	}
	ev("response.output_text.done", obj{"item_id": msgID, "output_index": 0, "content_index": 0, "text": Reply})
	ev("response.content_part.done", obj{"item_id": msgID, "output_index": 0, "content_index": 0, "part": part})
	ev("response.output_item.done", obj{"output_index": 0, "item": item})
	ev("response.completed", obj{"response": resp("completed", []obj{item}, usage)})
}

func anthropic(w http.ResponseWriter, stream bool, model, id string) {
	msgID := "msg_" + id
	if !stream {
		writeJSON(w, obj{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content":     []obj{{"type": "text", "text": Reply}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": obj{"input_tokens": 10, "output_tokens": 4},
		})
		return
	}
	s := newSSE(w)
	ev := func(name string, fields obj) {
		fields["type"] = name
		s.event(name, fields)
	}
	ev("message_start", obj{"message": obj{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	ev("content_block_start", obj{"index": 0, "content_block": obj{"type": "text", "text": ""}})
	ev("ping", obj{})
	for _, wd := range words() {
		ev("content_block_delta", obj{"index": 0, "delta": obj{"type": "text_delta", "text": wd}})
	}
	ev("content_block_stop", obj{"index": 0})
	ev("message_delta", obj{"delta": obj{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": obj{"output_tokens": 4}})
	ev("message_stop", obj{})
}
