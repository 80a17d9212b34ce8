# shellcheck shell=bash
# ccotel shell integration: logs the command a Claude Code Bash tool shell (or a Codex command's bash) runs.
#
# Sourced, never executed. `ccotel install-shell` makes Claude Code source it at the start of every
# Bash tool command (through a SessionStart hook that writes to CLAUDE_ENV_FILE); it can also be
# named in BASH_ENV (`install-shell --agent codex` sets it for the commands Codex runs). It does nothing
# unless CLAUDE_CODE_SESSION_ID (Claude Code) or CODEX_THREAD_ID (Codex) is set, and then appends two
# JSON lines to <log dir>/<session id>.jsonl: "start" now, "end" with the exit status when the shell
# exits (docs/HOOKS.md has every field).
#
# It must never change what the command does: no output, no traps but EXIT, no DEBUG trap, no
# PROMPT_COMMAND, no external process on the normal path, every error silenced.
# Log dir: $__ccotel_shell_log_dir (set by the installed line), else $CCOTEL_STATE_DIR/shell, else
# ${XDG_STATE_HOME:-$HOME/.local/state}/ccotel/shell.

[ -n "${BASH_VERSION-}" ] && [ -n "${CLAUDE_CODE_SESSION_ID-}${CODEX_THREAD_ID-}" ] && [ "${__ccotel_shell_pid-}" != "$$" ] || return 0
__ccotel_shell_sid=${CLAUDE_CODE_SESSION_ID:-${CODEX_THREAD_ID-}}

# The shell snapshot Claude Code sources first turns alias expansion on; no user alias may change
# what the functions below mean while they are being defined.
__ccotel_shell_aliases=
\builtin shopt -q expand_aliases && __ccotel_shell_aliases=1
\builtin shopt -u expand_aliases

__ccotel_shell_pid=$$

# Sets __ccotel_json to $1 as a JSON string (quotes included), without starting a process.
__ccotel_json_string() {
  if [[ $1 != *[\\\"[:cntrl:]]* ]]; then
    __ccotel_json="\"$1\""
    return 0
  fi
  local s=$1 c hex
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  if [[ $s == *[[:cntrl:]]* ]]; then
    s=${s//$'\n'/\\n}
    s=${s//$'\t'/\\t}
    s=${s//$'\r'/\\r}
    # Any other control character (rare): replace each distinct one everywhere with \u00XX.
    while [[ $s == *[[:cntrl:]]* ]]; do
      c=${s#"${s%%[[:cntrl:]]*}"}
      c=${c:0:1}
      builtin printf -v hex '\\u%04x' "'$c"
      s=${s//"$c"/$hex}
    done
  fi
  __ccotel_json="\"$s\""
}

# Sets __ccotel_bytes to the length of $1 in bytes.
__ccotel_byte_length() {
  local LC_ALL=C
  __ccotel_bytes=${#1}
}

# Appends one line, only to a log dir of this user's (`-O`: no process; another user's could be read or
# pointed anywhere). The first line of a file is written in a subshell with umask 077, so the file is 0600
# whatever the command's umask, which stays as it was; that subshell also recreates a missing log dir (0700).
# Errors are swallowed: logging is best effort.
__ccotel_append() {
  local dir=${__ccotel_shell_file%/*}
  if [[ -O $dir && -e $__ccotel_shell_file ]]; then
    { builtin printf '%s\n' "$1" >>"$__ccotel_shell_file"; } 2>/dev/null
  elif [[ ! -e $dir || -O $dir ]]; then
    (
      builtin umask 077
      [[ -e $dir ]] || command mkdir -p "$dir"
      builtin printf '%s\n' "$1" >>"$__ccotel_shell_file"
    ) 2>/dev/null
  fi
  return 0
}

# The command this shell runs. Claude Code's Bash tool runs
#   bash -c "source <snapshot> … && eval '<command, ' written as '"'"'>' [< /dev/null] && pwd -P >| <cwd file>"
# (a command of one word of letters, digits and @%+=:,./- unquoted: `eval pwd`), so the command is cut out of
# that and unquoted; any other shell logs its -c string or $0 and args.
__ccotel_command() {
  local whole=${BASH_EXECUTION_STRING-} head body rest
  if [[ -z $whole ]]; then
    __ccotel_cmd="$0${*:+ $*}"
    return 0
  fi
  __ccotel_cmd=$whole
  # ${whole%%X*} finds the first X in linear time; ${whole#*X} would be quadratic.
  head=${whole%%"&& eval '"*}
  body=${whole:${#head}+9}
  body=${body%" && pwd -P >| "*}
  body=${body%" < /dev/null"}
  if [[ $head != "$whole" && $body == *"'" ]]; then
    body=${body%"'"}
    __ccotel_cmd=${body//"'\"'\"'"/"'"}
    return 0
  fi
  # Unquoted, the word after the last `&& eval ` (a word has no spaces), looked for near the end only, and only in
  # Claude Code's line (its `pwd -P` after the command): another shell's `make && eval pwd` is logged whole.
  rest=${whole%" && pwd -P >| "*}
  [[ $rest != "$whole" ]] || return 0
  rest=${rest%" < /dev/null"}
  ((${#rest} > 1024)) && rest=${rest:${#rest}-1024}
  head=${rest%"&& eval "*}
  body=${rest:${#head}+8}
  [[ $head == "$rest" || -z $body || $body == *[![:alnum:]_@%+=:,./-]* ]] || __ccotel_cmd=$body
  return 0
}

# Controlling tty name from the tty_nr field of /proc/<pid>/stat ("" when there is none).
__ccotel_tty_name() {
  local nr=$1 major minor
  major=$(((nr >> 8) & 0xfff))
  minor=$(((nr & 0xff) | ((nr >> 12) & 0xfff00)))
  case $major in
    0) __ccotel_tty= ;;
    13[6-9] | 14[0-3]) __ccotel_tty=pts/$(((major - 136) * 256 + minor)) ;;
    4) ((minor < 64)) && __ccotel_tty=tty$minor || __ccotel_tty=ttyS$((minor - 64)) ;;
    *) __ccotel_tty=$major:$minor ;;
  esac
}

__ccotel_shell_start() {
  local max_command=4096 max_line=4095 skip pgid=null psid=null tty_nr=0 sid tp call tty cwd cmd line length keep
  __ccotel_shell_file=${__ccotel_shell_log_dir:-${CCOTEL_STATE_DIR:-${XDG_STATE_HOME:-${HOME-}/.local/state}/ccotel}/shell}/$__ccotel_shell_sid.jsonl
  # /proc/<pid>/stat: "pid (comm) state ppid pgrp session tty_nr …"; comm is bash's, without spaces.
  { IFS=' ' builtin read -r skip skip skip skip pgid psid tty_nr skip </proc/$$/stat; } 2>/dev/null
  __ccotel_tty_name "${tty_nr:-0}"
  __ccotel_command "$@"
  __ccotel_byte_length "$__ccotel_cmd" && length=$__ccotel_bytes
  cmd=${__ccotel_cmd:0:max_command}

  __ccotel_json_string "$__ccotel_shell_sid" && sid=$__ccotel_json
  __ccotel_json_string "${TRACEPARENT-}" && tp=$__ccotel_json
  __ccotel_json_string "${CODEX_TOOL_CALL_ID-}" && call=$__ccotel_json
  __ccotel_json_string "$PWD" && cwd=$__ccotel_json
  __ccotel_json_string "$__ccotel_tty" && tty=$__ccotel_json
  while :; do
    __ccotel_json_string "$cmd"
    line="{\"v\":1,\"ev\":\"start\",\"sid\":$sid,\"tp\":$tp,\"call\":$call,\"pid\":$$,\"ppid\":$PPID,\"pgid\":${pgid:-null},\"psid\":${psid:-null},\"tty\":$tty,\"cwd\":$cwd,\"cmd\":$__ccotel_json,\"cmdlen\":$length,\"ts\":${EPOCHREALTIME//[!0-9]/},\"seq\":1}"
    # One write() appends a whole line even when parallel Bash calls of a session log at once, and
    # bash writes at most 4096 bytes at a time: shorten the command until line and newline fit.
    ((${#line} * 4 <= max_line)) && break
    __ccotel_byte_length "$line"
    ((__ccotel_bytes <= max_line || ${#cmd} == 0)) && break
    keep=$((${#cmd} * max_line / __ccotel_bytes - 1))
    cmd=${cmd:0:keep < 0 ? 0 : keep}
  done
  __ccotel_append "$line"
  return 0
}

__ccotel_shell_end() {
  local status=$? cwd
  __ccotel_json_string "$PWD" && cwd=$__ccotel_json
  __ccotel_json_string "$__ccotel_shell_sid"
  __ccotel_append "{\"v\":1,\"ev\":\"end\",\"sid\":$__ccotel_json,\"pid\":$$,\"seq\":1,\"ts\":${EPOCHREALTIME//[!0-9]/},\"status\":$status,\"cwd\":$cwd}"
}

if [[ $__ccotel_shell_sid != *[!A-Za-z0-9._-]* ]]; then
  __ccotel_shell_start "$@"
  builtin trap '__ccotel_shell_end' EXIT
fi

[[ -n $__ccotel_shell_aliases ]] && \builtin shopt -s expand_aliases
\builtin unset __ccotel_shell_aliases
return 0
