package picker

import "hist/lib/termsafe"

// row is a prompt as one list row (termsafe.Line): each newline shows as
// ↵, other control characters as control pictures, so a row is one line
// and can never drive the terminal. Tabs stay (fzf expands them).
func row(text string) string { return termsafe.Line(text) }

// safe makes text safe to print in the preview pane (termsafe.Text):
// newlines and tabs stay, other control characters show as control
// pictures.
func safe(text string) string { return termsafe.Text(text) }
