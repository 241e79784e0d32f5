package envdir

import "testing"

func TestExpand(t *testing.T) {
	for in, want := range map[string]string{
		"~": "/h", "~/a/b": "/h/a/b", " ~/a": " ~/a", "~x": "~x", "/abs": "/abs", "": "", "rel/~": "rel/~",
	} {
		if got := Expand(in, "/h"); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
	if Get(nil, "X", "/h") != "" || Get(func(k string) string { return " ~/" + k + "!\t" }, "X", "/h") != "/h/X!" {
		t.Error("Get")
	}
}
