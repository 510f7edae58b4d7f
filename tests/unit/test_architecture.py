"""Rules about the shape of the code base, checked by parsing it."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RAW_CONSTRUCTORS = {
    "DurableStreamClient",
    "AsyncDurableStreamClient",
    "service_client",
    "async_service_client",
}
# Where the raw service client may be built: its own module, the recency wrapper, the sandbox
# proxy, scripts, benchmarks and tests. Anywhere else an append would leave recency stale.
ALLOWED = {"streams/client.py", "threads/recency.py", "threads/stream_proxy.py"}
ALLOWED_DIRS = ("tests/", "scripts/", "bench/")
SKIP_DIRS = {".venv", "node_modules", "var", ".git", "migrations"}


def python_files():
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if SKIP_DIRS.intersection(rel.parts):
            continue
        yield rel.as_posix(), path


def raw_constructor_calls(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in RAW_CONSTRUCTORS:
                lines.append(node.lineno)
    return lines


def test_raw_service_client_is_built_only_where_allowed():
    offenders = [
        f"{rel}:{line}"
        for rel, path in python_files()
        if rel not in ALLOWED and not rel.startswith(ALLOWED_DIRS)
        for line in raw_constructor_calls(path.read_text())
    ]
    assert offenders == [], f"raw stream client built outside the recency wrapper: {offenders}"


def test_the_check_finds_a_raw_construction():
    source = "from streams.client import service_client\nwriter = service_client()\n"
    assert raw_constructor_calls(source) == [2]
    assert raw_constructor_calls("c = streams.client.DurableStreamClient('u')") == [1]
