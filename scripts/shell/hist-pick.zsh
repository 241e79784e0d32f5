# hist-pick key binding for zsh: alt-r (pi's own key for the selector)
# opens the prompt history selector and inserts the chosen prompt at the
# cursor as one single-quoted word: `pi <alt-r>` gives `pi '<the prompt>'`,
# and nothing in the prompt runs. ctrl-o in the selector inserts the command that resumes the
# prompt's session instead, quoted for zsh.
#
#   eval "$(hist-pick --shell zsh)"               # in ~/.zshrc
#   eval "$(hist-pick --shell zsh --key ctrl-r)"  # ctrl-r instead, in place
#                                                 # of zsh's history search
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
  bindkey -M emacs '\er' hist-pick-widget
  bindkey -M vicmd '\er' hist-pick-widget
  bindkey -M viins '\er' hist-pick-widget
fi
