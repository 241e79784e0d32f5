package picker

import "hist/lib/termsafe"

// row is a prompt as one list row: each newline shows as \n (as zsh's
// history list shows it), other control characters, bidi and zero-width
// characters visibly (termsafe),
// so a row is one line and can never drive the terminal. Tabs stay (fzf
// expands them). The newline's mark is ASCII because fzf keeps a row that
// is all ASCII at a byte a character, and any other at four.
func row(text string) string { return termsafe.LineSep(text, `\n`) }
