#!/bin/sh
# ccotel as a Claude Code plugin: what hooks/hooks.json runs. Claude Code's `sh -c` sources it, as install-hooks'
# handler sources ccotel-hook.sh (one shell fewer), with what to do as $1:
#
#   spool   spool this hook event with ccotel-hook.sh (into the spool the state dir's environment names, as
#           `ccotel run` finds it), unless install-hooks' handler spools it in this session already
#   shell   (SessionStart) put the shell log's line into $CLAUDE_ENV_FILE, as install-shell's handler does
#
# Like the hook: nothing on stdout or stderr, always exit 0, no process but the hook's own `cat`.

exec >/dev/null 2>&1

# True when the settings file $1 runs ccotel-hook.sh: a "command" naming it (install-hooks' handler, or a command of
# the user's calling it), not just any mention (a permission rule). Read with the shell's own `read`: no process.
ccotel_runs_spool_hook() {
  [ -r "$1" ] || return 1
  while IFS= read -r ccotel_line || [ -n "$ccotel_line" ]; do
    case $ccotel_line in *'"command"'*ccotel-hook.sh*) return 0 ;; esac
  done <"$1"
  return 1
}

case $1 in
  spool)
    # One spool file per event: where install-hooks wrote its handler (the files it writes: the user's settings
    # and the project's), that handler spools the event and the plugin stands down.
    if ccotel_runs_spool_hook "$HOME/.claude/settings.json" || ccotel_runs_spool_hook "$CLAUDE_PROJECT_DIR/.claude/settings.json"; then
      cat >/dev/null
      exit 0
    fi
    set --
    . "$CLAUDE_PLUGIN_ROOT/hook/ccotel-hook.sh"
    ;;
  shell)
    # The Bash tool pastes this line before every command. The script logs a shell once even when install-shell's
    # line is pasted too. A root with a ' in it cannot be quoted here without a process: no shell log then.
    ccotel_script=$CLAUDE_PLUGIN_ROOT/shell/ccotel-shell.bash
    case $ccotel_script in *"'"*) exit 0 ;; esac
    [ -z "$CLAUDE_ENV_FILE" ] || printf '%s\n' "[ ! -r '$ccotel_script' ] || . '$ccotel_script'" >>"$CLAUDE_ENV_FILE"
    ;;
esac
exit 0
