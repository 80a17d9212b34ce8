#!/bin/sh
# ccotel hook: spools one Claude Code hook event (the JSON on stdin) for the ccotel sidecar.
#
#   ccotel-hook.sh [SPOOL_DIR [AGENT]]   (install-hooks bakes the absolute spool dir into the command; for an
#                                       agent other than Claude Code, `install-hooks --agent codex`, its name)
#
# install-hooks has Claude Code's own `sh -c` source it (`set -- SPOOL_DIR; . ccotel-hook.sh`): one shell
# fewer than running it. So it must work both ways: `exit` ends that shell, which has nothing else to do.
#
# It runs on every hook event, so it stays tiny: POSIX sh and one short-lived `cat`, the least any
# spooling hook can do; no Node. It never harms the agent: nothing on stdout or stderr, always exit 0,
# and when the event cannot be written (or the spool is another user's) it drains stdin, drops the event
# and appends a line to hook-dropped.
#
# Spool file: SPOOL_DIR/<pid>-<random>-<agent pid>[-<AGENT>].json holding stdin byte-for-byte; <agent pid> is the
# process that fired the event, <AGENT> the agent the install named (none: Claude Code). The firing time is the file's modification time (no `date`
# process), and the file is written in place (no `mv`): the reader takes a file that does not parse yet as
# still being written until it has been quiet for a few seconds (a proper prefix of one JSON object never
# parses).

exec >/dev/null 2>&1
umask 077

# Without an argument, the state dir as ccotel finds it. With no HOME either (a service, a stripped
# environment), the spool beside the directory the script is in: install-hooks puts it in <state>/bin.
if [ -n "$1" ]; then spool=$1
elif [ -n "$CCOTEL_STATE_DIR" ]; then spool=$CCOTEL_STATE_DIR/spool
elif [ -n "$XDG_STATE_HOME" ]; then spool=$XDG_STATE_HOME/ccotel/spool
elif [ -n "$HOME" ]; then spool=$HOME/.local/state/ccotel/spool
else
  case $0 in
    */*) spool=${0%/*}/../spool ;;
    *) cat >/dev/null; exit 0 ;; # found on PATH: nowhere known to write to
  esac
fi

random=
read -r random </proc/sys/kernel/random/uuid
# The Claude Code process that fired the event (it sets CLAUDE_PID for hooks): tells the sidecar which
# process runs the session now, e.g. the resumed CLI of a resume.
agent=${CLAUDE_PID:-$PPID}
case $agent in '' | *[!0-9]*) agent=$PPID ;; esac
case $random in ????????-????-*) random=${random%-*-*-*} ;; *) random=00000000-0000 ;; esac
# The agent named by the install: its events are its own whatever the sidecar read of the session before them.
case $2 in '' | *[!a-z-]*) named= ;; *) named=-$2 ;; esac
file=$spool/$$-$random-$agent$named.json

drop() {
  cat >/dev/null
  [ -O "${spool%/*}" ] || exit 0 # never append to a file in a dir another user owns: they could point it anywhere
  fired=$(date +%s%N)
  while [ ${#fired} -lt 20 ]; do fired=0$fired; done
  printf '%s %s\n' "$fired" "$1" >>"${spool%/*}/hook-dropped"
  exit 0
}

[ -d "$spool" ] || mkdir -p "$spool" || drop mkdir
# Only into a spool of this user's, in a state dir of this user's (`-O` is a builtin test: no process): another
# user who owns either could read the events or plant their own. Modes are set by install-hooks and `run`.
[ -O "$spool" ] && [ -O "${spool%/*}" ] || drop untrusted
[ -e "$file" ] && drop clash # never overwrite another event's file (same pid and random: counted, not lost silently)
cat >"$file" || { rm -f "$file"; drop write; }
exit 0
