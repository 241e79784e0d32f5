# hist-pick key binding for fish: alt-r (pi's own key for the selector)
# opens the prompt history selector and inserts the chosen prompt at the
# cursor as one single-quoted word: `pi <alt-r>` gives `pi '<the prompt>'`,
# and nothing in the prompt runs. ctrl-o in the selector inserts the command that resumes the
# prompt's session instead, quoted for fish.
#
#   hist-pick --shell fish | source               # in ~/.config/fish/config.fish
#   hist-pick --shell fish --key ctrl-r | source  # ctrl-r instead, in place
#                                                 # of fish's history pager
# HIST_PICK_OPTS holds extra hist-pick flags (e.g. --all).

function hist_pick_widget -d "Insert a prompt from hist's history"
    set -l opts (string split ' ' -- "$HIST_PICK_OPTS" | string match -v '')
    set -l selected (command hist-pick --word --shell fish $opts | string collect)
    and commandline -i -- $selected
    commandline -f repaint
end

if status is-interactive
    bind \er hist_pick_widget
    bind -M insert \er hist_pick_widget 2>/dev/null
end
