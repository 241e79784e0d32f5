# hist-pick key binding for fish: ctrl-r opens the prompt history selector
# (it replaces fish's history pager on ctrl-r, as fzf's CTRL-R widget
# does) and inserts the chosen prompt at the cursor as one single-quoted
# word: `pi <ctrl-r>` gives `pi '<the prompt>'`, and nothing in the prompt
# runs. ctrl-o in the selector inserts the command that resumes the
# prompt's session instead, quoted for fish.
#
#   hist-pick --shell fish | source       # in ~/.config/fish/config.fish
#
# To bind another key instead: bind \eh hist_pick_widget   # alt-h
# HIST_PICK_OPTS holds extra hist-pick flags (e.g. --all).

function hist_pick_widget -d "Insert a prompt from hist's history"
    set -l opts (string split ' ' -- "$HIST_PICK_OPTS" | string match -v '')
    set -l selected (command hist-pick --word --shell fish $opts | string collect)
    and commandline -i -- $selected
    commandline -f repaint
end

if status is-interactive
    bind \cr hist_pick_widget
    bind -M insert \cr hist_pick_widget 2>/dev/null
end
