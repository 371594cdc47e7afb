#!/usr/bin/env bash
# The Python tools of the repository from PyPI in a virtualenv of their own, .venv-py/ at the repo root:
# openapi-python-client (and the ruff it formats with) to generate clients/python, the client's runtime
# packages (httpx, attrs, python-dateutil), pytest for its live tests, and pyarrow, the independent
# Parquet reader of the export tests, and mypy, the type check of the client's hand-written layer.
#
#   scripts/python-env.sh --install                    set the venv up (or check it is) and print the versions
#   scripts/python-env.sh python ARGS...               the same, then exec a tool of the venv, e.g.
#   scripts/python-env.sh pytest clients/python/tests
#   scripts/python-env.sh openapi-python-client generate --path openapi.json ...
#
# Idempotent and safe to run concurrently (a lock around the install): a venv already holding exactly
# these pins is reused as it is. Everything installed is pinned, so that generation is byte-stable
# (the generator's templates and ruff's formatting change between releases) and the tests read with
# the same pyarrow on every machine. The venv's bin/ leads PATH for the tool it runs (the generator
# calls ruff by name). PY_VENV overrides the venv's folder; PYTHON the interpreter it is made with
# (3.11+: the generated code uses enum.StrEnum).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${PY_VENV:-$root/.venv-py}"

pins='openapi-python-client==0.29.1
ruff==0.17.6
httpx==0.28.1
attrs==26.1.0
python-dateutil==4.0.0
pytest==9.2.0
pyarrow==26.0.1
mypy==2.4.1
ast_serialize==0.13.1
librt==0.17.0
mypy_extensions==1.2.0
pathspec==1.1.1
annotated-doc==0.0.7
annotated-types==0.8.0
anyio==4.16.0
certifi==2026.10.19.post1
h11==0.16.0
httpcore==1.0.9
idna==3.20
iniconfig==2.3.1
Jinja2==3.1.6
markdown-it-py==4.3.0
MarkupSafe==3.0.4
mdurl==0.1.2
packaging==26.4
pluggy==1.7.0
pydantic==2.14.4
pydantic_core==2.50.5
Pygments==2.21.0
rich==15.0.0
ruamel.yaml==0.19.1
shellingham==1.5.4
typer==0.27.3
typing-inspection==0.4.5
typing_extensions==4.16.0
tzdata==2026.6'

tools='python pytest openapi-python-client ruff mypy'

# shellcheck source=scripts/pinned-venv.sh
. "$root/scripts/pinned-venv.sh"
ensure_pinned_venv python-env.sh "$venv" "$pins" bin/openapi-python-client 11 'the Python client and the export tests'

if [ "${1:-}" = "--install" ]; then
  echo "$("$venv/bin/python" --version) in $venv: $(head -n 8 <<<"$pins" | paste -sd ' ')"
  exit 0
fi
tool="${1:-}"
case " $tools " in
  *" $tool "*) ;;
  *) echo "python-env.sh: name one of: --install, ${tools// /, } (got '${tool}')" >&2; exit 2 ;;
esac
shift
export PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv"
exec "$venv/bin/$tool" "$@"
