#!/bin/sh
# ccotel hook: spools one Claude Code hook event (the JSON on stdin) for the ccotel sidecar.
#
#   ccotel-hook.sh [SPOOL_DIR]     (install-hooks bakes the absolute spool dir into the command)
#
# It runs on every hook event, so it stays tiny: POSIX sh, three short-lived coreutils (date, cat,
# mv), no Node. It never harms the agent: nothing on stdout or stderr, always exit 0, and when the
# event cannot be written it drains stdin, drops the event and appends a line to hook-dropped.
#
# Spool file: SPOOL_DIR/<fired-at epoch ns, 20 digits>-<pid>-<random>.json holding stdin
# byte-for-byte, written under a .tmp- name and renamed so a reader never sees half an event.

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

fired=$(date +%s%N)
case $fired in
  '' | *[!0-9]*) fired=$(date +%s)000000000 ;; # a date without %N (not GNU)
esac
while [ ${#fired} -lt 20 ]; do fired=0$fired; done

random=
read -r random </proc/sys/kernel/random/uuid
random=${random%%-*}
name=$fired-$$-${random:-0}

drop() {
  cat >/dev/null
  printf '%s %s\n' "$fired" "$1" >>"${spool%/*}/hook-dropped"
  exit 0
}

[ -d "$spool" ] || mkdir -p "$spool" || drop mkdir
cat >"$spool/.tmp-$name" || { rm -f "$spool/.tmp-$name"; drop write; }
mv -f "$spool/.tmp-$name" "$spool/$name.json" || { rm -f "$spool/.tmp-$name"; drop rename; }
exit 0
