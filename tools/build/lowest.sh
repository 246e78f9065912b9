#!/usr/bin/env bash
# `bash tools/build/lowest.sh CMD...`: runs CMD at the lowest CPU priority, in what the rest of the machine leaves
# idle. With the kernel's autogroups on (Debian's default), nice ranks a process only against the processes of its
# own session, and each session's group gets an equal share: so CMD gets a session of its own whose group is at nice
# 19 too (/proc/self/autogroup), as well as nice 19 itself. Exits with CMD's status.
set -uo pipefail
exec setsid --wait bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null || true; exec nice -n 19 "$@"' lowest "$@"
