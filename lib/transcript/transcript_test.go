package transcript

import "testing"

func TestExpandHome(t *testing.T) {
	for in, want := range map[string]string{
		"~": "/h", "~/a/b": "/h/a/b", " ~/a": " ~/a", "~x": "~x", "/abs": "/abs", "": "", "rel/~": "rel/~",
	} {
		if got := ExpandHome(in, "/h"); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
	if Getenv(nil, "X") != "" || Getenv(func(k string) string { return " " + k + "!\t" }, "X") != "X!" {
		t.Error("Getenv")
	}
}
