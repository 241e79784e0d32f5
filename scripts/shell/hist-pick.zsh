# hist-pick key binding for zsh: ctrl-r opens the prompt history selector
# (it replaces zsh's history-incremental-search on ctrl-r, as fzf's
# CTRL-R widget does) and inserts the chosen prompt at the cursor as one
# single-quoted word: `pi <ctrl-r>` gives `pi '<the prompt>'`, and nothing
# in the prompt runs. ctrl-o in the selector inserts the command that resumes the
# prompt's session instead, quoted for zsh.
#
#   eval "$(hist-pick --shell zsh)"       # in ~/.zshrc
#
# To bind another key instead: bindkey '\eh' hist-pick-widget   # alt-h
# HIST_PICK_OPTS holds extra hist-pick flags (e.g. --all).

hist-pick-widget() {
  local selected
  selected="$(command hist-pick --word --shell zsh ${=HIST_PICK_OPTS} </dev/tty)"
  local ret=$?
  if [[ $ret -eq 0 && -n $selected ]]; then
    LBUFFER+="$selected"
  fi
  zle reset-prompt
  return 0
}

if [[ -o interactive ]]; then
  zle -N hist-pick-widget
  bindkey -M emacs '^R' hist-pick-widget
  bindkey -M vicmd '^R' hist-pick-widget
  bindkey -M viins '^R' hist-pick-widget
fi
