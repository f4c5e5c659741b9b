#!/usr/bin/env bash
# The shipped units under this machine's real systemd (booted in namespaces, see namespace.sh),
# installed as `make install` installs them and set up as the README says (systemd-sysusers,
# systemd-tmpfiles): the system units driven as root and as other users, the way an
# administrator and the users of a shared daemon would, and the user units under a user's own
# manager. Needs root; skipped with the reason
# otherwise. Leaves the machine as it found it, and checks that it did.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=Tests/service

skip() { echo "units: skipped: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root (make test runs it when started as root, as CI does)"
for tool in unshare nsenter setpriv findmnt pgrep /lib/systemd/systemd; do
    command -v "$tool" > /dev/null || skip "needs $tool"
done
grep -qw overlay /proc/filesystems || skip "needs overlayfs for a private /etc"
[ -n "$(findmnt -n -t cgroup2 -o TARGET | head -n 1)" ] || skip "needs a cgroup2 hierarchy"

# What must be the same after the test: the user and group databases, /etc's names, the
# kernel settings systemd might set, the host name, the cgroup2 root and /tmp.
machine_state() {
    md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow 2>/dev/null
    ls -A /etc /tmp /var/tmp /var/lib
    cat /proc/sys/fs/file-max /proc/sys/fs/nr_open /proc/sys/net/unix/max_dgram_qlen /proc/sys/kernel/core_pattern
    hostname
    ls "$(findmnt -n -t cgroup2 -o TARGET | head -n 1)"
}

stage=$(mktemp -d /tmp/savingsd-units.XXXXXX)
before=""
source "$here/namespace.sh"
finish() {
    local status=$?
    ns_stop
    local after
    after=$(machine_state | grep -v "savingsd-units")
    if [ -n "$before" ] && [ "$before" != "$after" ]; then
        echo "units: FAIL: the machine changed:" >&2
        diff <(echo "$before") <(echo "$after") >&2 || true
        status=1
    fi
    rm -rf "$stage"
    exit $status
}
trap finish EXIT

failures=0
passes=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
    local what=$1; shift
    if "$@"; then
        passes=$((passes + 1)); echo "ok: $what"
    else
        failures=$((failures + 1)); echo "FAIL: $what" >&2
    fi
}

make --no-print-directory install DESTDIR="$stage/root" PREFIX=/usr/local BUILD_CONFIG="${BUILD_CONFIG:-debug}" \
    > "$stage/install.log" 2>&1 || { cat "$stage/install.log" >&2; exit 1; }
# From here on nothing outside the namespace may change (the build above leaves its own temporary files).
before=$(machine_state | grep -v "savingsd-units")
ns_boot "$stage" || { echo "units: FAIL: systemd did not boot in the namespace" >&2; exit 1; }

ctl() { ns /usr/local/bin/savingsctl "$@"; }
# as UID GROUPS ARGS...: savingsctl as another user with exactly these supplementary groups.
as() {
    local uid=$1 groups=$2; shift 2
    local switch=(--reuid="$uid" --regid="$uid")
    if [ -n "$groups" ]; then switch+=(--groups="$groups"); else switch+=(--clear-groups); fi
    ns setpriv "${switch[@]}" -- /usr/local/bin/savingsctl "$@"
}
prop() { ns systemctl show -p "$1" --value "$2"; }
contains() { grep -q -- "$2" <<< "$1"; }

savings=$(ns getent group savings | cut -d: -f3)
check "systemd-sysusers created the savings group from the installed snippet" test -n "$savings"
ns groupadd --system savings-readers
readers=$(ns getent group savings-readers | cut -d: -f3)

# --- Activation, readiness, the sandbox --------------------------------------------------
check "the socket listens before the service runs" test "$(prop SubState savingsd.socket)" = listening
check "the service waits for its first client" test "$(prop ActiveState savingsd.service)" = inactive
check "the socket is root:savings 0660 in a directory everyone may enter" \
    test "$(ns stat -c '%U:%G %a' /run/savingsd/savingsd.sock /run/savingsd)" = "$(printf 'root:savings 660\nroot:root 755')"
out=$(ctl status 2>&1) || true
check "the first connection starts the daemon and is answered (status)" contains "$out" "mode      systemd"
check "READY=1 made the unit active (Type=notify)" test "$(prop SubState savingsd.service)" = running
check "STATUS= describes the daemon" contains "$(prop StatusText savingsd.service)" "serving 0 goals"
ctl goal add Emergency --target 5000 --currency EUR --deadline 2027-06-30 > /dev/null
check "a write and a read" contains "$(ctl goal list)" "Emergency"
first_pid=$(prop MainPID savingsd.service)
check "nothing at warning or above in the journal for a healthy start" \
    test -z "$(ns journalctl -q --no-pager -p warning -u savingsd.service)"
check "no thread-priority complaints from libdispatch" \
    test -z "$(ns journalctl -q --no-pager -u savingsd.service | grep -i 'thread priority' || true)"
# Exposure of the unit as shipped: without the test's DefaultDependencies=no drop-in, which
# makes systemd-analyze skip ProtectSystem= and friends as "special boot phase".
ns mv /etc/systemd/system/savingsd.service.d/namespace-test.conf /run/namespace-test.conf.off
ns systemctl daemon-reload
exposure=$(ns systemd-analyze security --no-pager savingsd.service | sed -n 's/.*Overall exposure level for savingsd.service: \([0-9.]*\).*/\1/p')
ns mv /run/namespace-test.conf.off /etc/systemd/system/savingsd.service.d/namespace-test.conf
ns systemctl daemon-reload
echo "exposure of the running unit: $exposure"
check "systemd-analyze security rates the running unit 1.2 or lower" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 1.2) }'

# --- Who may connect -------------------------------------------------------------------
out=$(as 65533 "" goal list 2>&1) && status=0 || status=$?
check "a non-member is refused at connect() (exit 3)" test "$status" = 3
check "and told which group grants access and how to join it" contains "$out" "usermod -aG savings"
out=$(as 65534 "$savings" goal list 2>&1) && status=0 || status=$?
check "by default a member of savings reaches the socket but is not served" \
    test "$status" = 1 -a -n "$(grep permission_denied <<< "$out")"

# The administrator's recipe (README "Sharing with other users"): one configuration key, a reload.
ns sh -c 'printf "[rpc]\nallow_groups = [\"savings\"]\nread_only_groups = [\"savings-readers\"]\n" > /etc/savingsd/savingsd.toml'
ns systemctl reload savingsd.service
check "reload keeps the daemon (same process)" test "$(prop MainPID savingsd.service)" = "$first_pid"
check "and it is active again after RELOADING=1 / READY=1" test "$(prop ActiveState savingsd.service)" = active
out=$(as 65534 "$savings" goal add Bike --target 900 --currency EUR --deadline 2027-03-31 2>&1) || true
check "a member of savings is served, writes included" contains "$(as 65534 "$savings" goal list)" "Bike"
out=$(as 65532 "$savings,$readers" goal list 2>&1) || true
check "a member of read_only_groups reads" contains "$out" "Emergency"
out=$(as 65532 "$savings,$readers" goal archive Bike 2>&1) && status=0 || status=$?
check "and is refused writes with read_only" test "$status" = 1 -a -n "$(grep read_only <<< "$out")"
out=$(as 65533 "" goal list 2>&1) && status=0 || status=$?
check "a non-member is still refused at connect()" test "$status" = 3

# --- Files over the connection -----------------------------------------------------------
# The daemon (a dynamic user, ProtectHome=, PrivateTmp=) never sees its users' files: savingsctl
# sends and writes them, from and into directories only their owners may enter.
for uid in 65534 65532; do ns install -d -m 0700 -o "$uid" -g "$uid" "/tmp/files-$uid"; done
ns sh -c 'printf "date,amount,note\n2026-01-02,100.50,salary\n2026-01-03,-20,rent\n" > /tmp/files-65534/bank.csv
          cp /tmp/files-65534/bank.csv /tmp/files-65532/; chown 65534:65534 /tmp/files-65534/bank.csv; chown 65532:65532 /tmp/files-65532/bank.csv'
as 65534 "$savings" asset add Bank --currency EUR --kind fiat > /dev/null
out=$(as 65534 "$savings" tx import Bank /tmp/files-65534/bank.csv 2>&1) || true
check "a member imports a CSV from their own 0700 directory" contains "$out" "2 imported"
out=$(as 65534 "$savings" backup /tmp/files-65534/copy.db 2>&1) || true
check "and receives a backup into it, theirs and 0600" test "$(ns stat -c '%u %a' /tmp/files-65534/copy.db)" = "65534 600"
check "a sound SQLite database" test "$(ns sqlite3 /tmp/files-65534/copy.db 'PRAGMA integrity_check')" = ok
out=$(as 65534 "$savings" export /tmp/files-65534/all.json 2>&1) || true
check "an export too" contains "$(ns cat /tmp/files-65534/all.json)" '"format":"savingsd-export"'
out=$(as 65532 "$savings,$readers" tx import Bank /tmp/files-65532/bank.csv 2>&1) && status=0 || status=$?
check "a member of read_only_groups may not upload" test "$status" = 1 -a -n "$(grep read_only <<< "$out")"
out=$(as 65532 "$savings,$readers" backup /tmp/files-65532/copy.db 2>&1) || true
check "but receives a backup" test "$(ns stat -c '%u %a' /tmp/files-65532/copy.db)" = "65532 600"
check "nothing of the transfers is left in the daemon's state" \
    test -z "$(ns find /var/lib/private/savingsd -name '.savingsd-transfer-*')"

# --- Watchdog, restart, stop -----------------------------------------------------------
echo "waiting 40 s, past WatchdogSec=30s ..."
sleep 40
check "the watchdog is fed: no restart after 40 s" \
    test "$(prop MainPID savingsd.service)" = "$first_pid" -a "$(prop NRestarts savingsd.service)" = 0
ns systemctl restart savingsd.service
check "a restart comes back with a new process" test "$(prop MainPID savingsd.service)" != "$first_pid"
check "and the data kept" contains "$(ctl goal list)" "Bike"
ns systemctl stop savingsd.service savingsd.socket
check "a stop is clean (no failure recorded)" test "$(prop Result savingsd.service)" = success
check "and the socket is removed" ns test ! -e /run/savingsd/savingsd.sock
ns systemctl start savingsd.socket
check "after a stop, the next client starts it again with the data" contains "$(ctl goal list)" "Emergency"

# --- The per-user units ------------------------------------------------------------------
# A user's own manager (user@UID.service), the user units as `make install` installed them,
# enabled as the README says; as in the system, no journal noise and a clean life cycle.
for unit in user@.service user-runtime-dir@.service; do
    ns mkdir -p "/etc/systemd/system/$unit.d"
    ns sh -c "printf '[Unit]\nDefaultDependencies=no\n' > /etc/systemd/system/$unit.d/namespace-test.conf"
done
# There is no logind (nor system bus) in the namespace: the runtime directory it would make is
# made by hand, and the user manager is started without the PAM session that would set it.
ns sh -c "printf '[Service]\nExecStart=\nExecStart=/usr/bin/install -d -m 0700 -o %%i /run/user/%%i\nExecStop=\nExecStop=/bin/rm -rf /run/user/%%i\n' \
    >> /etc/systemd/system/user-runtime-dir@.service.d/namespace-test.conf"
ns sh -c "printf '[Service]\nPAMName=\nEnvironment=XDG_RUNTIME_DIR=/run/user/%%i\n' >> /etc/systemd/system/user@.service.d/namespace-test.conf"
ns useradd --create-home --home-dir /var/lib/alice --shell /bin/sh alice
alice_uid=$(ns id -u alice)
ns systemctl daemon-reload
ns systemctl start "user@$alice_uid.service"
alice() { ns setpriv --reuid="$alice_uid" --regid="$(ns id -g alice)" --init-groups -- env HOME=/var/lib/alice XDG_RUNTIME_DIR="/run/user/$alice_uid" "$@"; }
user_prop() { alice systemctl --user show -p "$1" --value "$2"; }
alice systemctl --user enable --now savingsd.socket > /dev/null 2>&1
check "the user socket listens, 0600 in a 0700 directory of the user's" \
    test "$(ns stat -c '%U %a' /run/user/$alice_uid/savingsd/savingsd.sock /run/user/$alice_uid/savingsd)" = "$(printf 'alice 600\nalice 700')"
check "and the user service waits for its first client" test "$(user_prop ActiveState savingsd.service)" = inactive
alice /usr/local/bin/savingsctl goal add House --target 30000 --currency EUR --deadline 2030-01-01 > /dev/null
check "the first client starts the user daemon: a write and a read" contains "$(alice /usr/local/bin/savingsctl goal list)" "House"
check "READY=1 made the user unit active" test "$(user_prop SubState savingsd.service)" = running
user_pid=$(user_prop MainPID savingsd.service)
alice systemctl --user reload savingsd.service
check "reload keeps the user daemon" test "$(user_prop MainPID savingsd.service)" = "$user_pid"
alice systemctl --user restart savingsd.service
check "a restart keeps the user's data" contains "$(alice /usr/local/bin/savingsctl goal list)" "House"
user_journal=$(ns journalctl -q --no-pager _SYSTEMD_USER_UNIT=savingsd.service)
check "the user daemon logged" contains "$user_journal" "ready"
check "nothing at warning or above from the user daemon" \
    test -z "$(ns journalctl -q --no-pager -p warning _SYSTEMD_USER_UNIT=savingsd.service)"
check "no thread-priority complaints from the user daemon either" test -z "$(grep -i 'thread priority' <<< "$user_journal" || true)"
# The web view's user unit: the URL in the journal, the page served as alice from her daemon.
alice systemctl --user start savings-web.service
url=""
for _ in $(seq 50); do
    url=$(ns journalctl -q --no-pager -o cat _SYSTEMD_USER_UNIT=savings-web.service | grep -m1 '^http://127.0.0.1:8765/?token=' || true)
    [ -n "$url" ] && break
    sleep 0.2
done
check "savings-web.service printed its URL to the journal" test -n "$url"
jar=$(ns mktemp)
check "the link's token gives the session cookie" test "$(ns curl -s -o /dev/null -w '%{http_code}' -c "$jar" "$url")" = 303
check "and the page shows alice's goals" contains "$(ns curl -s -b "$jar" http://127.0.0.1:8765/)" "House"
check "without the cookie: 403" test "$(ns curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8765/)" = 403
ns rm -f "$jar"
alice systemctl --user stop savings-web.service
check "a clean stop of the web view" test "$(user_prop Result savings-web.service)" = success
alice systemctl --user stop savingsd.service savingsd.socket
check "a clean stop of the user units" test "$(user_prop Result savingsd.service)" = success

# --- A service that never answers --------------------------------------------------------
ns systemctl stop savingsd.service
ns mkdir -p /etc/systemd/system/savingsd.service.d
ns sh -c 'printf "[Service]\nExecStart=\nExecStart=/bin/sleep 600\nTimeoutStartSec=300\n" > /etc/systemd/system/savingsd.service.d/stuck.conf'
ns systemctl daemon-reload
start=$(date +%s)
out=$(ctl goal list 2>&1) && status=0 || status=$?
took=$(( $(date +%s) - start ))
echo "a stuck start: savingsctl gave up after ${took} s"
check "a daemon that never answers: savingsctl gives up within 10 s (exit 3)" test "$status" = 3 -a "$took" -le 12
check "saying it accepted but did not answer" contains "$out" "accepted the connection but did not answer"
check "and where to look" contains "$out" "journalctl -u savingsd"

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
