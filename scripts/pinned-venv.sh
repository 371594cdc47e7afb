# Sourced by scripts/schemathesis.sh and scripts/python-env.sh: a virtualenv holding exactly a pinned
# set of PyPI packages, made once and reused.
#
#   ensure_pinned_venv NAME VENV PINS MARKER MIN_MINOR WHY
#
# NAME names the calling script in errors; VENV is the folder; PINS the packages, one `pkg==version`
# a line (exact versions of everything installed, so that every machine gets the same); MARKER a file
# under VENV that exists once installed; MIN_MINOR the least Python 3 minor version; WHY what needs it
# (for the error). Idempotent and safe to run concurrently (a lock around the install): a venv already
# holding exactly these pins is reused as it is. PYTHON picks the interpreter (python3 by default).

pinned_venv_ready() { [ -x "$2/$4" ] && [ "$(cat "$2/.pins" 2>/dev/null)" = "$3" ]; }

ensure_pinned_venv() {
  local name=$1 venv=$2 pins=$3 marker=$4 min_minor=$5 why=$6
  pinned_venv_ready "$name" "$venv" "$pins" "$marker" && return 0
  mkdir -p "$(dirname "$venv")"
  exec 9>"$venv.lock"
  flock 9 # another run may be installing right now: wait for it, then look again
  if ! pinned_venv_ready "$name" "$venv" "$pins" "$marker"; then
    local python="${PYTHON:-python3}"
    command -v "$python" >/dev/null || { echo "$name: $python not found (Python 3.$min_minor+ is needed for $why)" >&2; exit 2; }
    "$python" -c "import sys; sys.exit(sys.version_info < (3, $min_minor))" || { echo "$name: $("$python" --version 2>&1) is too old (3.$min_minor+ is needed for $why; PYTHON=python3.X picks another)" >&2; exit 2; }
    rm -rf "$venv"
    "$python" -m venv "$venv" || { echo "$name: '$python -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 2; }
    printf '%s\n' "$pins" >"$venv/requirements.txt"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$venv/requirements.txt" >&2
    "$venv/bin/pip" check --disable-pip-version-check >&2
    printf '%s' "$pins" >"$venv/.pins" # last: a half-done install is redone next time
  fi
  exec 9>&-
}
