#!/usr/bin/env bash
# Boots this machine's systemd as PID 1 of private PID, mount, UTS and cgroup namespaces, with the
# units that `make install` staged under STAGE/root (PREFIX=/usr/local), and nothing of
# sysinit.target. Sourced by the service tests; `ns_boot STAGE` starts it, `ns CMD...` runs a
# command inside, `ns_stop` kills it and removes what it left.
#
# What it must never touch, and how it does not: everything systemd or the units could write is
# private to the namespace. /run, /tmp, /var/tmp, /var/lib, /var/log, /var/cache and /usr/local are
# fresh tmpfs; /etc is an overlay whose changes live in a tmpfs (so systemd-sysusers, groupadd and
# ConfigurationDirectory= change only the copy); /dev is a private tmpfs with the harmless nodes
# bound in and /dev/console, /dev/kmsg pointing at a log file (the machine's kernel log and
# console stay untouched); /proc/sys and /sys are read-only; `container=` tells systemd not to
# set up the machine (no modules, clock, hostname or sysctls); its cgroups live in a child
# cgroup of the machine's cgroup2 hierarchy, removed at the end. sysinit.target's units and the
# journal's /dev/log and audit sockets are masked; the units under test get
# DefaultDependencies=no, so nothing else is started.

ns_pid=""
ns_unshare=""
ns_cgroup=""
ns_stage=""

# Runs inside the new namespaces (as their PID 1 before it becomes systemd).
ns_inside() {
    local stage=$1
    set -eu
    # /dev: a private tmpfs with the nodes services need; console and kmsg go to a file.
    local dev=$stage/mnt/dev
    mkdir -p "$dev"
    mount -t tmpfs -o mode=0755,nosuid tmpfs "$dev"
    for node in null zero full random urandom tty; do
        touch "$dev/$node"
        mount --bind "/dev/$node" "$dev/$node"
    done
    : > "$stage/console.log"
    touch "$dev/console" "$dev/kmsg"
    mount --bind "$stage/console.log" "$dev/console"
    mount --bind "$stage/console.log" "$dev/kmsg"
    mkdir -p "$dev/pts" "$dev/shm"
    ln -s /proc/self/fd "$dev/fd"
    ln -s /proc/self/fd/0 "$dev/stdin"
    ln -s /proc/self/fd/1 "$dev/stdout"
    ln -s /proc/self/fd/2 "$dev/stderr"
    # syslog(3) reaches the journal as on a booted machine (journald binds the socket itself).
    ln -s /run/systemd/journal/dev-log "$dev/log"
    mount --move "$dev" /dev
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
    ln -s pts/ptmx /dev/ptmx
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm

    mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
    mkdir -p /run/lock
    for dir in /var/lib /var/log /var/cache; do mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$dir"; done

    # /etc: the machine's, with every change kept in a tmpfs.
    local overlay=$stage/mnt/etc
    mkdir -p "$overlay"
    mount -t tmpfs -o mode=0755 tmpfs "$overlay"
    mkdir -p "$overlay/upper" "$overlay/work"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$overlay/upper,workdir=$overlay/work" /etc

    # /usr/local: exactly what `make install` staged.
    mount -t tmpfs -o mode=0755 tmpfs /usr/local
    cp -a "$stage/root/usr/local/." /usr/local/

    # Last, as the stage itself may live under /tmp.
    for dir in /tmp /var/tmp; do mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$dir"; done

    # The kernel's settings and the machine's cgroups are not systemd's to change here.
    mount --bind /proc/sys /proc/sys
    mount -o remount,bind,ro /proc/sys
    mount -o remount,bind,ro /sys
    mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup

    # Only the test target and what it pulls in.
    local units=/etc/systemd/system
    for unit in $(ls /lib/systemd/system/sysinit.target.wants/ | grep -v "^systemd-journald.service$") sysinit.target basic.target \
            systemd-journald-dev-log.socket systemd-journald-audit.socket syslog.socket \
            systemd-tmpfiles-setup.service systemd-tmpfiles-clean.timer systemd-sysusers.service; do
        ln -sf /dev/null "$units/$(basename "$unit")"
    done
    for unit in savingsd.service savingsd.socket systemd-journald.service systemd-journald.socket; do
        mkdir -p "$units/$unit.d"
        printf '[Unit]\nDefaultDependencies=no\n' > "$units/$unit.d/namespace-test.conf"
    done
    cat > "$units/savingsd-test.target" <<'EOF'
[Unit]
Description=savingsd under test
DefaultDependencies=no
Requires=systemd-journald.socket savingsd.socket
Wants=systemd-journald.service
After=systemd-journald.socket systemd-journald.service savingsd.socket
EOF
    mkdir -p /etc/systemd/journald.conf.d
    printf '[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToKMsg=no\nForwardToConsole=no\nForwardToWall=no\n' \
        > /etc/systemd/journald.conf.d/namespace-test.conf

    # What an administrator runs after `make install` (README), here on the private /etc.
    systemd-sysusers /usr/local/lib/sysusers.d/savingsd.conf
    systemd-tmpfiles --create /usr/local/lib/tmpfiles.d/savingsd.conf
    hostname savingsd-test

    exec env -i container=savingsd-test PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
        /lib/systemd/systemd --system --unit=savingsd-test.target --log-level=info --show-status=no
}

# Starts systemd in the namespaces; STAGE holds root/ (the staged install) and receives logs.
ns_boot() {
    ns_stage=$1
    local hierarchy
    hierarchy=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
    [ -n "$hierarchy" ] || return 2
    ns_cgroup="$hierarchy/savingsd-test.$$"
    mkdir "$ns_cgroup"
    (
        echo "$BASHPID" > "$ns_cgroup/cgroup.procs"
        exec unshare --pid --fork --mount-proc --mount --uts --cgroup --propagation private \
            bash -c 'source "$1"; ns_inside "$2"' namespace "${BASH_SOURCE[0]}" "$ns_stage"
    ) > "$ns_stage/boot.log" 2>&1 &
    ns_unshare=$!
    local tries=0
    while [ -z "$ns_pid" ]; do
        ns_pid=$(pgrep -P "$ns_unshare" || true)
        tries=$((tries + 1))
        [ $tries -lt 100 ] || { cat "$ns_stage/boot.log" >&2; return 1; }
        sleep 0.1
    done
    # Wait until the manager answers and has reached its target.
    tries=0
    until [ "$(ns systemctl is-active savingsd-test.target 2>/dev/null)" = active ]; do
        tries=$((tries + 1))
        if [ $tries -ge 300 ]; then
            cat "$ns_stage/boot.log" "$ns_stage/console.log" >&2
            return 1
        fi
        sleep 0.1
    done
}

ns() { nsenter -t "$ns_pid" -m -p -u -C -- "$@"; }

# Kills the namespace's systemd (and with it every process of the namespace) and removes its cgroups.
ns_stop() {
    if [ -n "$ns_pid" ]; then kill -KILL "$ns_pid" 2>/dev/null || true; fi
    if [ -n "$ns_unshare" ]; then wait "$ns_unshare" 2>/dev/null || true; fi
    if [ -n "$ns_cgroup" ] && [ -d "$ns_cgroup" ]; then
        local tries=0
        while ! find "$ns_cgroup" -depth -type d -exec rmdir {} + 2>/dev/null; do
            tries=$((tries + 1))
            [ $tries -lt 50 ] || { echo "namespace: cannot remove $ns_cgroup" >&2; break; }
            sleep 0.1
        done
    fi
    ns_pid=""
    ns_unshare=""
    ns_cgroup=""
}
