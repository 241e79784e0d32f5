# hist-pick key binding for fish: ctrl-r opens the prompt history selector
# and inserts the chosen prompt at the cursor (it replaces fish's history
# pager on ctrl-r, as fzf's CTRL-R widget does).
#
#   hist-pick --shell fish | source       # in ~/.config/fish/config.fish
#
# To bind another key instead: bind \eh hist_pick_widget   # alt-h
# HIST_PICK_OPTS holds extra hist-pick flags (e.g. --all).

function hist_pick_widget -d "Insert a prompt from hist's history"
    set -l opts (string split ' ' -- "$HIST_PICK_OPTS" | string match -v '')
    set -l selected (command hist-pick $opts | string collect)
    and commandline -i -- $selected
    commandline -f repaint
end

if status is-interactive
    bind \cr hist_pick_widget
    bind -M insert \cr hist_pick_widget 2>/dev/null
end
