#!/usr/bin/env bash
# `bash tools/build/step.sh NAME CMD...`: runs CMD as a timed step (tools/build/lib.sh), for callers that are not
# bash (the Makefile). Exits with CMD's status.
set -uo pipefail
# shellcheck source=tools/build/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
step_run "$@"
