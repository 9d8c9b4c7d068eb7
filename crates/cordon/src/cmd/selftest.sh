#!/bin/sh
# cordon selftest: escape probes and "still works" probes, run through `cordon run` on this
# host (macOS: Seatbelt; Linux: the namespace/Landlock/seccomp helper). Run it with
# `cordon selftest`, or by hand: `sh selftest.sh /path/to/cordon`.
# Output: one line per probe, `RESULT<TAB>name<TAB>detail`, RESULT = PASS, FAIL or SKIP.
# An escape probe's inner command exits 42 only when the escape worked.
set -u
CORDON=${1:?usage: selftest.sh /path/to/cordon}
OS=$(uname -s)
# Under /var/tmp: outside `:tmp` (/tmp and $TMPDIR), so the project is a workspace of its
# own and the temp dirs stay writable inside the sandbox.
T=$(mktemp -d /var/tmp/cordon-selftest.XXXXXX) || exit 125
# The probe project's cache layers go with it (nu20 G6: each selftest left a `proj-<hash>`
# set in `cordon cache list`).
trap '(cd "$T/proj" 2>/dev/null && "$CORDON" cache clear --workspace >/dev/null 2>&1); rm -rf "$T"' EXIT INT TERM
P="$T/proj"
mkdir -p "$P/src" "$P/secret" && cd "$P" || exit 125
if command -v git >/dev/null 2>&1 && git init -q . 2>/dev/null; then
    :
else
    mkdir -p .git/hooks .git/objects .git/refs
    printf 'ref: refs/heads/main\n' > .git/HEAD
    printf '[core]\n' > .git/config
fi
mkdir -p .git/hooks
echo "do-not-read" > secret/key
echo "fd-secret" > "$T/fdsecret"

result() { printf '%s\t%s\t%s\n' "$1" "$2" "$3"; }

# inbox [cordon run flags…] -- SCRIPT: run SCRIPT with /bin/sh inside the sandbox.
inbox() {
    flags=""
    while [ "$1" != "--" ]; do flags="$flags $1"; shift; done
    shift
    # shellcheck disable=SC2086
    "$CORDON" run -p workspace-write $flags -- /bin/sh -c "$1" </dev/null >/dev/null 2>&1
}

# escape NAME WHAT [flags…] -- SCRIPT: PASS unless SCRIPT exits 42 (the escape worked).
# WHAT says what the sandbox kept from happening, for the PASS line (new-user pass 150: a
# pass read "refused (exit 0)"); the probe's own exit status follows it.
escape() {
    name=$1; what=$2; shift 2
    inbox "$@"; rc=$?
    if [ "$rc" -eq 42 ]; then result FAIL "$name" "escape worked"
    else result PASS "$name" "$what (probe exit $rc)"; fi
}

# works NAME [flags…] -- SCRIPT: PASS when SCRIPT exits 0.
works() {
    name=$1; shift
    inbox "$@"; rc=$?
    if [ "$rc" -eq 0 ]; then result PASS "$name" "ok"
    else result FAIL "$name" "exit $rc"; fi
}

restore_git() {
    [ -d "$P/moved" ] && [ ! -e "$P/.git" ] && mv "$P/moved" "$P/.git"
    [ -d "$P/.git.old" ] && rm -f "$P/.git" && mv "$P/.git.old" "$P/.git"
    rm -f "$P/cfg" "$P/moved" 2>/dev/null
    return 0
}

# The sandbox itself must work, or every "refused" below proves nothing.
if ! inbox -- 'exit 0'; then
    result FAIL sandbox-runs "cordon run refused or failed; see \`cordon status\`"
    exit 1
fi
result PASS sandbox-runs "ok"

# Still works (the twins of the escapes below).
works write-in-workspace -- 'echo x > ./f && rm ./f'
works temp-file -- 'f=$(mktemp) && echo x > "$f" && rm "$f"'
works git-dir-writes -- 'echo x > .git/cordon-probe && rm .git/cordon-probe'
if command -v git >/dev/null 2>&1; then works git-status -- 'git status --short'; else result SKIP git-status "no git"; fi
if command -v python3 >/dev/null 2>&1; then
    works python-multiprocessing -- 'python3 -c "
import multiprocessing as m
if __name__ == \"__main__\":
    l = m.Lock(); l.acquire(); l.release()
    with m.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
"'
else result SKIP python-multiprocessing "no python3"; fi
if command -v node >/dev/null 2>&1; then
    works node-os-cpus -- 'node -e "process.exit(require(\"os\").cpus().length > 0 ? 0 : 1)"'
else result SKIP node-os-cpus "no node"; fi
if [ -r /dev/tty ] && (: </dev/tty) 2>/dev/null; then
    if "$CORDON" run -p workspace-write -- stty -a </dev/tty >/dev/null 2>&1; then
        result PASS stty "ok"
    else result FAIL stty "stty on the terminal failed"; fi
else result SKIP stty "no terminal"; fi

# Escapes.
escape move-git-aside ".git could not be moved aside" -- 'mv .git moved && exit 42'; restore_git
escape replace-git-with-file ".git could not be replaced by a file" -- 'mv .git .git.old && printf "gitdir: /tmp\n" > .git && exit 42'; restore_git
escape write-git-hook "no git hook could be written" -- 'echo "echo pwned" > .git/hooks/pre-commit && exit 42'
# .git/config is a writable private copy inside; only allow-listed keys reach the host file.
inbox -- 'printf "[core]\n\tfsmonitor = ./x\n" >> .git/config'
if grep -q fsmonitor .git/config; then
    result FAIL write-git-config "core.fsmonitor reached the host .git/config"
else result PASS write-git-config "core.fsmonitor stayed in the sandbox's copy, not merged back"; fi
escape hard-link-out ".git/config could not be written through a hard link" -- 'ln .git/config cfg && echo x >> cfg && exit 42'; restore_git
escape move-workspace "the workspace could not be moved" -- "mv '$P' '$T/moved' && exit 42"
[ -d "$T/moved" ] && mv "$T/moved" "$P"
# An escape only if the file is there on the host afterwards: with $HOME under /tmp the
# write lands in the sandbox's private /tmp and is discarded (new-user pass nu58: a false
# FAIL).
rm -f "$HOME/.cordon-selftest-probe"
inbox -- "echo x > '$HOME/.cordon-selftest-probe' && exit 42"; rc=$?
if [ "$rc" -eq 42 ] && [ -e "$HOME/.cordon-selftest-probe" ]; then
    result FAIL write-outside "escape worked"
elif [ "$rc" -eq 42 ]; then
    result PASS write-outside "written only inside the sandbox (the home is under its private /tmp)"
else
    result PASS write-outside "the home directory could not be written (probe exit $rc)"
fi
rm -f "$HOME/.cordon-selftest-probe"
escape read-denied "the denied file could not be read" --deny-read "$P/secret" -- 'cat secret/key && exit 42'
escape read-denied-case-variant "the denied file could not be read in another letter case" --deny-read "$P/secret" -- 'cat SECRET/key && exit 42 || cat Secret/KEY && exit 42'
escape move-denied-parent "the denied directory could not be moved and read" --deny-read "$P/secret" -- 'mv secret s2 && cat s2/key && exit 42'
[ -d "$P/s2" ] && mv "$P/s2" "$P/secret"
escape hard-link-denied "the denied file could not be read through a hard link" --deny-read "$P/secret" -- 'ln secret/key k2 && cat k2 && exit 42'
rm -f "$P/k2"
# A descriptor opened outside on a file the sandbox may not read.
"$CORDON" run -p workspace-write --deny-read "$T/fdsecret" -- /bin/sh -c 'cat <&9 && exit 42' \
    9<"$T/fdsecret" </dev/null >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 42 ]; then result FAIL inherited-descriptor "read through fd 9"
else result PASS inherited-descriptor "a denied file open on fd 9 could not be read (probe exit $rc)"; fi
# Other processes' environment (kern.procargs2 on macOS, /proc/PID/environ on Linux): the
# canary is a secret by name, so it is scrubbed from the sandbox's own environment.
export CORDON_SELFTEST_TOKEN=canary-4711
if [ "$OS" = Darwin ]; then
    escape other-process-environment "another process's environment could not be read" -- 'ps -wwE -p $PPID -o command= | grep -q canary-4711 && exit 42'
else
    escape other-process-environment "another process's environment could not be read" -- 'for f in /proc/[0-9]*/environ; do grep -q canary-4711 "$f" 2>/dev/null && exit 42; done; exit 0'
fi
unset CORDON_SELFTEST_TOKEN
# Typing into the terminal (TIOCSTI).
if command -v python3 >/dev/null 2>&1 && (: </dev/tty) 2>/dev/null; then
    "$CORDON" run -p workspace-write -- python3 -c '
import fcntl, termios, sys
try:
    fcntl.ioctl(sys.stdin, termios.TIOCSTI, b" ")
except OSError:
    sys.exit(0)
sys.exit(42)' </dev/tty >/dev/null 2>&1
    rc=$?
    if [ "$rc" -eq 42 ]; then result FAIL tiocsti "a character was pushed into the terminal"
    else result PASS tiocsti "nothing could be pushed into the terminal (probe exit $rc)"; fi
elif ! command -v python3 >/dev/null 2>&1; then result SKIP tiocsti "no python3 on PATH"
else result SKIP tiocsti "no controlling terminal (/dev/tty cannot be opened; run selftest from a terminal)"; fi
exit 0
