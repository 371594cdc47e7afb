#!/usr/bin/env bash
# schemathesis (contract fuzzing) from PyPI in a virtualenv of its own, .venv-fuzz/ at the repo root.
#
#   scripts/schemathesis.sh --install     set the venv up (or check it is) and print the version
#   scripts/schemathesis.sh ARGS...       the same, then exec `st ARGS...`, e.g.
#   scripts/schemathesis.sh --config-file F run http://127.0.0.1:8080/v1/public/openapi.json --checks all
#
# Idempotent and safe to run concurrently (a lock around the install): a venv already holding exactly
# these pins is reused as it is. schemathesis and everything it pulls in are pinned, so that one seed
# generates the same test cases on every machine (hypothesis' generation changes between releases).
# FUZZ_VENV overrides the venv's folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${FUZZ_VENV:-$root/.venv-fuzz}"

pins='schemathesis==4.32.5
anyio==4.16.0
certifi==2026.10.18
charset-normalizer==3.5.2
click==8.5.1
graphql-core==3.3.2
harfile==0.6.0
hypothesis==6.170.15
hypothesis-graphql==0.13.5
idna==3.20
iniconfig==2.3.1
jsonschema_rs==0.60.3
markdown-it-py==4.3.0
MarkupSafe==3.0.4
mdurl==0.1.2
packaging==26.3
pluggy==1.7.0
Pygments==2.21.0
pyrate-limiter==4.5.1
pytest==9.2.0
PyYAML==6.0.3
requests==2.34.2
rich==15.0.0
sortedcontainers==2.4.0
typing_extensions==4.16.0
urllib3==2.8.0
Werkzeug==3.1.9'

# shellcheck source=scripts/pinned-venv.sh
. "$root/scripts/pinned-venv.sh"
ensure_pinned_venv schemathesis.sh "$venv" "$pins" bin/st 9 'the contract fuzzing'

if [ "${1:-}" = "--install" ]; then
  exec "$venv/bin/st" --version
fi
exec "$venv/bin/st" "$@"
