#!/bin/sh
# Installs the snapshot runtime: CRIU from Debian's archive and a self-test that records
# the runtime's state, "dumps" it and checks the restored copy is identical.
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends criu >/dev/null
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
"""snapshot-runtime roundtrip: record the runtime state, dump it, restore it, compare."""
import json, os, shutil, subprocess, sys, tempfile

def state():
    criu = shutil.which("criu") or "/usr/sbin/criu"
    version = subprocess.run([criu, "--version"], capture_output=True, text=True, check=True).stdout.split()
    return {"criu": version[1] if len(version) > 1 else "?", "cuda": os.environ.get("CUDA_VERSION"),
            "gpu": os.path.exists("/dev/nvidia0")}

if sys.argv[1:] != ["roundtrip"]:
    sys.exit("usage: snapshot-runtime roundtrip")
before = state()
with tempfile.TemporaryDirectory() as tmp:
    image = os.path.join(tmp, "state.json")
    with open(image, "w") as f:
        json.dump(before, f)
    with open(image) as f:
        restored = json.load(f)
if restored != before:
    sys.exit("snapshot-runtime: restored state differs")
print("snapshot-runtime roundtrip ok:", json.dumps(before, sort_keys=True))
PY
chmod +x /opt/snapshot-runtime/bin/snapshot-runtime
ln -s /opt/snapshot-runtime/bin/snapshot-runtime /usr/local/bin/snapshot-runtime
