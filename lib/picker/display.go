package picker

import "hist/lib/termsafe"

// row is a prompt as one list row: each newline shows as \n (as zsh's
// history list shows it), other control characters as control pictures,
// so a row is one line and can never drive the terminal. Tabs stay (fzf
// expands them). The newline's mark is ASCII because fzf keeps a row that
// is all ASCII at a byte a character, and any other at four.
func row(text string) string { return termsafe.LineSep(text, `\n`) }

// safe makes text safe to print in the preview pane (termsafe.Text):
// newlines and tabs stay, other control characters show as control
// pictures.
func safe(text string) string { return termsafe.Text(text) }
