#!/bin/sh
# Installs the snapshot runtime: CRIU (4.2 or later by default: 3.17 cannot start on kernels
# with today's vDSO layout, 4.1 cannot dump a TCP socket on 6.16 and later) and
# snapshot-runtime, which checkpoints the running server and restores it, also into a
# fresh container.
#
# CRIU_SUITE: the Debian suite CRIU comes from (default forky). The suite is added beside
# the base's own sources, with the same mirror, pinned so that only CRIU and what it needs
# come from it.
set -eu
export DEBIAN_FRONTEND=noninteractive
suite="${1:-forky}"
if ! grep -qs " ${suite} " /etc/apt/sources.list; then
    base=$(sed -n 's/^deb \([^ ]*\) \([a-z]*\) .*/\2/p' /etc/apt/sources.list | head -n 1)
    sed -n "s/^deb \([^ ]*\) ${base} \(.*\)/deb \1 ${suite} \2/p" /etc/apt/sources.list \
        > /etc/apt/sources.list.d/snapshot-runtime.list
    printf 'Package: *\nPin: release n=%s\nPin-Priority: 100\n' "${suite}" \
        > /etc/apt/preferences.d/snapshot-runtime
fi
# A suite's Release file is only valid for a while; a snapshot of the archive outlives it.
apt-get -o Acquire::Check-Valid-Until=false update -qq
apt-get install -y -qq --no-install-recommends -t "${suite}" criu >/dev/null
# What apt and dpkg leave that says when and where they ran, not what they installed: the
# downloaded packages and lists, the package caches apt rebuilds, the logs, ldconfig's cache
# of file times, debconf's and dpkg's backups. Two builds of one commit then have the same
# content (the stand-in base's rootfs is scrubbed of the same things).
apt-get clean
find /var/log -type f -delete
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/ldconfig/aux-cache \
    /var/cache/debconf/*-old /var/lib/dpkg/*-old
mkdir -p /opt/snapshot-runtime/bin
cat > /opt/snapshot-runtime/bin/snapshot-runtime <<'PY'
#!/usr/bin/env python3
"""snapshot-runtime: checkpoint a running server with CRIU and restore it.

  snapshot-runtime hold               the container's first process: reaps what is started,
                                      copies the server's log to its own output
  snapshot-runtime start -- CMD...    start the server in a session of its own
  snapshot-runtime dump DIR           checkpoint it into DIR (the server stops)
  snapshot-runtime restore DIR        restore it from DIR, in this container or a fresh one
  snapshot-runtime check              CRIU's own check of this kernel and these privileges

dump and restore print one JSON line with CRIU's time; on failure they print the end of
CRIU's log and the output of `criu check`, and exit 1.
"""
import json, os, shutil, signal, subprocess, sys, threading, time

STATE = "/run/snapshot-runtime"
PID = STATE + "/pid"
LOG = "/var/log/snapshot-runtime/server.log"
CRIU = ["criu", "--shell-job", "--tcp-established", "--file-locks"]
PID_FLOOR = 1000


def fail(message, log=None):
    out = [f"snapshot-runtime: {message}"]
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            out += ["  " + line.rstrip() for line in f.readlines()[-6:]]
    check = subprocess.run(["criu", "check"], capture_output=True, text=True)
    said = (check.stdout + check.stderr).strip().splitlines()
    out.append("criu check: " + ("; ".join(said[-3:]) if said else f"exit {check.returncode}"))
    sys.exit("\n".join(out))


def hold():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    seen = 0
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        try:
            with open(LOG, "rb") as f:
                f.seek(seen)
                data = f.read()
            seen += len(data)
            if data:
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
        except FileNotFoundError:
            seen = 0
        time.sleep(0.2)


def above_low_pids():
    """Move this container's next PID past PID_FLOOR: a restore needs the server's PIDs
    free, and in a fresh container the restore's own processes take the low ones."""
    for _ in range(2 * PID_FLOOR):  # a thread takes a PID too, and costs less than a fork
        thread = threading.Thread(target=int)
        thread.start()
        thread.join()
        if thread.native_id >= PID_FLOOR:
            return


def start(argv):
    if not argv:
        sys.exit("usage: snapshot-runtime start -- CMD...")
    above_low_pids()
    os.makedirs(STATE, exist_ok=True)
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    with open(os.devnull) as null, open(LOG, "ab") as log:
        proc = subprocess.Popen(argv, stdin=null, stdout=log, stderr=log, start_new_session=True)
    with open(PID, "w") as f:
        f.write(str(proc.pid))
    print(json.dumps({"pid": proc.pid}))


def timed(args, directory, what):
    started = time.perf_counter()
    run = subprocess.run(CRIU + args + ["-D", directory, "-o", what + ".log", "-v2"],
                         capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        said = (run.stdout + run.stderr).strip().splitlines()
        fail(f"criu {what} failed (exit {run.returncode})" + (": " + said[-1] if said else ""),
             os.path.join(directory, what + ".log"))
    print(json.dumps({what: "ok", "seconds": round(seconds, 4)}))


def dump(directory):
    try:
        with open(PID) as f:
            pid = f.read().strip()
    except FileNotFoundError:
        sys.exit("snapshot-runtime: nothing started here (no " + PID + ")")
    os.makedirs(directory, exist_ok=True)
    timed(["dump", "-t", pid], directory, "dump")
    if os.path.exists(LOG):  # the server holds it open: the restore needs it as it was
        shutil.copy2(LOG, os.path.join(directory, "server.log"))


def restore(directory):
    if not os.path.isdir(directory):
        sys.exit(f"snapshot-runtime: no checkpoint in {directory}")
    saved = os.path.join(directory, "server.log")
    if os.path.exists(saved):
        os.makedirs(os.path.dirname(LOG), exist_ok=True)
        shutil.copy2(saved, LOG)
    timed(["restore", "-d"], directory, "restore")


def main(args):
    if args[:1] == ["hold"]:
        return hold()
    if args[:2] == ["start", "--"]:
        return start(args[2:])
    if args[:1] == ["dump"] and len(args) == 2:
        return dump(args[1])
    if args[:1] == ["restore"] and len(args) == 2:
        return restore(args[1])
    if args == ["check"]:
        check = subprocess.run(["criu", "check"])
        sys.exit(check.returncode)
    sys.exit(__doc__)


main(sys.argv[1:])
PY
chmod +x /opt/snapshot-runtime/bin/snapshot-runtime
ln -s /opt/snapshot-runtime/bin/snapshot-runtime /usr/local/bin/snapshot-runtime
