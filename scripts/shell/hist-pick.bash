# hist-pick key binding for bash: ctrl-r opens the prompt history selector
# (it replaces bash's reverse-search on ctrl-r, as fzf's CTRL-R widget
# does) and inserts the chosen prompt at the cursor as one single-quoted
# word: `pi <ctrl-r>` gives `pi '<the prompt>'`, and nothing in the prompt
# runs. ctrl-o in the selector inserts the command that resumes the
# prompt's session instead, quoted for bash.
#
#   eval "$(hist-pick --shell bash)"      # in ~/.bashrc
#
# To bind another key instead, bind the widget yourself afterwards, e.g.
#   bind -x '"\eh": __hist_pick_widget'   # alt-h
# HIST_PICK_OPTS holds extra hist-pick flags (e.g. --all).

__hist_pick_widget() {
  local selected
  # shellcheck disable=SC2086
  selected="$(command hist-pick --word --shell bash $HIST_PICK_OPTS)" || return
  # READLINE_POINT counts characters (bash 5), as ${var:off:len} does.
  READLINE_LINE="${READLINE_LINE:0:READLINE_POINT}${selected}${READLINE_LINE:READLINE_POINT}"
  READLINE_POINT=$((READLINE_POINT + ${#selected}))
}

if [[ $- == *i* ]]; then
  bind -m emacs-standard -x '"\C-r": __hist_pick_widget'
  bind -m vi-command -x '"\C-r": __hist_pick_widget'
  bind -m vi-insert -x '"\C-r": __hist_pick_widget'
fi
