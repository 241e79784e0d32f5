# hist-pick key binding for bash: alt-r (pi's own key for the selector)
# opens the prompt history selector and inserts the chosen prompt at the
# cursor as one single-quoted word: `pi <alt-r>` gives `pi '<the prompt>'`,
# and nothing in the prompt runs. ctrl-o in the selector inserts the command that resumes the
# prompt's session instead, quoted for bash.
#
#   eval "$(hist-pick --shell bash)"              # in ~/.bashrc
#   eval "$(hist-pick --shell bash --key ctrl-r)" # ctrl-r instead, in place
#                                                 # of bash's reverse search
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
  bind -m emacs-standard -x '"\er": __hist_pick_widget'
  bind -m vi-command -x '"\er": __hist_pick_widget'
  bind -m vi-insert -x '"\er": __hist_pick_widget'
fi
