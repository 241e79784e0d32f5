package histcapture

import (
	"strings"
	"testing"
	"time"
)

// TestStamp: a time's age in its largest whole unit, days from 48 hours.
func TestStamp(t *testing.T) {
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{-time.Hour, "in the future"}, {0, "0s ago"}, {59 * time.Second, "59s ago"}, {90 * time.Second, "1m ago"},
		{119 * time.Minute, "1h ago"}, {47*time.Hour + 59*time.Minute, "47h ago"}, {48 * time.Hour, "2d ago"}, {100 * 24 * time.Hour, "100d ago"},
	} {
		if got := stamp(time.Now().Add(-c.ago)); !strings.HasSuffix(got, " ("+c.want+")") {
			t.Errorf("%v ago: %s, want (%s)", c.ago, got, c.want)
		}
	}
}
