#!/bin/sh
# `make install DESTDIR=... PREFIX=/usr` puts the expected tree in place: binaries that run,
# completions for three shells, man pages that render, units pointing at the installed
# binaries, the sysusers/tmpfiles snippets and the example configuration.
set -eu
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
make --no-print-directory install DESTDIR="$root" PREFIX=/usr BUILD_CONFIG=debug > "$root.log" 2>&1 || { cat "$root.log"; exit 1; }
rm -f "$root.log"
fail() { echo "check-install: $*" >&2; exit 1; }
for path in \
    usr/bin/savingsd usr/bin/savingsctl usr/lib/savingsd/savings-web \
    usr/share/bash-completion/completions/savingsctl usr/share/bash-completion/completions/savingsd \
    usr/share/zsh/site-functions/_savingsctl usr/share/fish/vendor_completions.d/savingsctl.fish \
    usr/share/man/man1/savingsd.1 usr/share/man/man1/savingsctl.1 usr/share/man/man1/savingsctl.goal.1 usr/share/man/man1/savingsctl.report.1 usr/share/man/man1/savingsctl.demo.1 \
    usr/lib/systemd/system/savingsd.service usr/lib/systemd/system/savingsd.socket \
    usr/lib/systemd/user/savingsd.service usr/lib/systemd/user/savingsd.socket usr/lib/systemd/user/savings-web.service \
    usr/lib/sysusers.d/savingsd.conf usr/lib/tmpfiles.d/savingsd.conf \
    usr/share/doc/savingsd/savingsd.toml.example usr/share/doc/savingsd/examples/savings_client.py \
    usr/share/doc/savingsd/import/kraken-ledgers.toml; do
    [ -s "$root/$path" ] || fail "missing or empty: $path"
done
"$root/usr/bin/savingsctl" --version > /dev/null || fail "the installed savingsctl does not run"
# `savingsctl web` runs the installed server: with no daemon it says so, not that the server is missing.
web=$("$root/usr/bin/savingsctl" --socket "$root/none.sock" web 2>&1) && fail "savingsctl web without a daemon succeeded"
case "$web" in *"not installed"*) fail "the installed savingsctl web does not find savings-web: $web";; esac
"$root/usr/bin/savingsd" --check-config --config "$root/usr/share/doc/savingsd/savingsd.toml.example" > /dev/null \
    || fail "the example configuration does not validate"
grep -q '^ExecStart=/usr/bin/savingsd --system' "$root/usr/lib/systemd/system/savingsd.service" || fail "system unit ExecStart"
grep -q '^ExecStart=/usr/bin/savingsd' "$root/usr/lib/systemd/user/savingsd.service" || fail "user unit ExecStart"
grep -q '^ExecStart=/usr/bin/savingsctl web' "$root/usr/lib/systemd/user/savings-web.service" || fail "web user unit ExecStart"
grep -q 'tx' "$root/usr/share/bash-completion/completions/savingsctl" || fail "bash completion lacks subcommands"
grep -q '^\.Dt SAVINGSCTL 1' "$root/usr/share/man/man1/savingsctl.1" || fail "savingsctl.1 is not a man page"
if command -v man > /dev/null; then
    MANWIDTH=80 man -l "$root/usr/share/man/man1/savingsctl.1" 2>/dev/null | grep -q 'savingsctl' || fail "savingsctl.1 does not render"
fi
echo "check-install: ok ($(find "$root" -type f | wc -l) files)"
