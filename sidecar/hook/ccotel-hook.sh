#!/bin/sh
# ccotel hook: spools one Claude Code hook event (the JSON on stdin) for the ccotel sidecar.
#
#   ccotel-hook.sh [SPOOL_DIR]     (install-hooks bakes the absolute spool dir into the command)
#
# It runs on every hook event, so it stays tiny: POSIX sh, three short-lived coreutils (date, cat,
# mv), no Node. It never harms the agent: nothing on stdout or stderr, always exit 0, and when the
# event cannot be written it drains stdin, drops the event and appends a line to hook-dropped.
#
# Spool file: SPOOL_DIR/<fired-at epoch ns, 20 digits>-<pid>-<random>-<agent pid>.json holding stdin
# byte-for-byte, written under a .tmp- name and renamed so a reader never sees half an event.

exec >/dev/null 2>&1
umask 077

spool=${1:-${CCOTEL_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/ccotel}/spool}

fired=$(date +%s%N)
case $fired in
  '' | *[!0-9]*) fired=$(date +%s)000000000 ;; # a date without %N (not GNU)
esac
while [ ${#fired} -lt 20 ]; do fired=0$fired; done

random=
read -r random </proc/sys/kernel/random/uuid
random=${random%%-*}
# The Claude Code process that fired the event (it sets CLAUDE_PID for hooks): tells the sidecar which
# process runs the session now, e.g. the resumed CLI of a resume.
agent=${CLAUDE_PID:-$PPID}
case $agent in '' | *[!0-9]*) agent=$PPID ;; esac
name=$fired-$$-${random:-0}-$agent

drop() {
  cat >/dev/null
  printf '%s %s\n' "$fired" "$1" >>"${spool%/*}/hook-dropped"
  exit 0
}

[ -d "$spool" ] || mkdir -p "$spool" || drop mkdir
cat >"$spool/.tmp-$name" || { rm -f "$spool/.tmp-$name"; drop write; }
mv -f "$spool/.tmp-$name" "$spool/$name.json" || { rm -f "$spool/.tmp-$name"; drop rename; }
exit 0
