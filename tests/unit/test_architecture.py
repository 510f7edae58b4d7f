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
ALLOWED = {
    "streams/client.py",
    "threads/log.py",
    "threads/recency.py",
    "threads/stream_proxy.py",
}
ALLOWED_DIRS = ("tests/", "scripts/", "bench/")
SKIP_DIRS = {".venv", "node_modules", "var", ".git", "migrations"}


def python_files():
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if SKIP_DIRS.intersection(rel.parts):
            continue
        yield rel.as_posix(), path


def raw_constructor_calls(source: str) -> list[int]:
    """Lines that reach a raw constructor in any way: a call, an import (aliased or not),
    a reference passed around, an attribute of the module, or its name as a string."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom | ast.Import):
            names = [alias.name.rsplit(".", 1)[-1] for alias in node.names]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        else:
            continue
        if RAW_CONSTRUCTORS.intersection(names):
            lines.add(node.lineno)
    return sorted(lines)


def test_raw_service_client_is_built_only_where_allowed():
    offenders = [
        f"{rel}:{line}"
        for rel, path in python_files()
        if rel not in ALLOWED and not rel.startswith(ALLOWED_DIRS)
        for line in raw_constructor_calls(path.read_text())
    ]
    assert offenders == [], f"raw stream client reached outside the recency wrapper: {offenders}"


def test_the_check_finds_a_raw_construction():
    source = "from streams.client import service_client\nwriter = service_client()\n"
    assert raw_constructor_calls(source) == [1, 2]
    assert raw_constructor_calls("c = streams.client.DurableStreamClient('u')") == [1]


def test_the_check_finds_aliases():
    aliased = "from streams.client import service_client as make\nw = make()\n"
    assert raw_constructor_calls(aliased) == [1]
    assert raw_constructor_calls("import streams.client as sc\nw = sc.service_client()\n") == [2]
    assert raw_constructor_calls("make = getattr(client, 'async_service_client')\n") == [1]
    assert raw_constructor_calls("factory = service_client\n") == [1]


def test_the_recency_writer_offers_no_raw_client():
    from threads.recency import AsyncRecencyTrackingWriter, RecencyTrackingWriter

    for cls in (RecencyTrackingWriter, AsyncRecencyTrackingWriter):
        public = {name for name in vars(cls) if not name.startswith("_")}
        assert "client" not in public
        assert not hasattr(cls, "__getattr__")
        writes = {"close_stream", "send", "http_stream", "producer", "delete", "sse", "open"}
        assert public.isdisjoint(writes), public & writes


RAW_TYPES = {"DurableStreamClient", "AsyncDurableStreamClient"}
# Inside the allowlist a raw client is built, but it must not leave: the modules that hold
# one hand out only wrappers (the recency writer, the read-only log readers, the proxies).
HOLDERS = {"threads/log.py", "threads/recency.py", "threads/stream_proxy.py"}


def raw_client_exits(source: str) -> list[str]:
    """Ways a module lets a raw client out: a public function that returns one (by its
    annotation, or by returning a raw constructor's or a private pool's call), a public
    module name bound to a raw constructor or a pool of them, or a public attribute a
    class stores one in."""
    tree = ast.parse(source)
    exits = []

    def mentions_raw(node) -> bool:
        return any(
            isinstance(n, ast.Name)
            and n.id in RAW_TYPES | RAW_CONSTRUCTORS
            or isinstance(n, ast.Attribute)
            and n.attr in RAW_TYPES | RAW_CONSTRUCTORS
            or isinstance(n, ast.Constant)
            and n.value in RAW_TYPES
            for n in ast.walk(node)
        )

    def raw_value(value) -> bool:
        """A raw constructor's call, or a pool made of one (``per_loop(service_client)``)."""
        if not isinstance(value, ast.Call):
            return False
        return mentions_raw(value.func) or any(
            isinstance(a, ast.Name | ast.Attribute) and mentions_raw(a) for a in value.args
        )

    private_pools = {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign) and raw_value(node.value)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("_"):
                continue
            if node.returns is not None and mentions_raw(node.returns):
                exits.append(f"{node.name}() returns a raw client")
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    call = ret.value
                    if isinstance(call, ast.Call) and (
                        mentions_raw(call.func)
                        or isinstance(call.func, ast.Name)
                        and call.func.id in private_pools
                    ):
                        exits.append(f"{node.name}() returns a raw client")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                name = target.id if isinstance(target, ast.Name) else None
                attr = target.attr if isinstance(target, ast.Attribute) else None
                public = (name or attr or "_")[0] != "_"
                if public and raw_value(node.value):
                    exits.append(f"{name or attr} holds a raw client")
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Attribute)
            and not node.target.attr.startswith("_")
            and mentions_raw(node.annotation)
        ):
            exits.append(f"{node.target.attr} holds a raw client")
    return exits


def test_a_raw_client_never_leaves_the_modules_that_hold_one():
    exits = {rel: raw_client_exits((ROOT / rel).read_text()) for rel in sorted(HOLDERS)}
    assert {rel: found for rel, found in exits.items() if found} == {}


def test_nothing_outside_reaches_into_a_holder_for_its_client():
    """Private names of the holders (``_upstream``, ``_client``, ``_clients``…) are theirs:
    no other module imports them or reads a ``_client`` attribute off a wrapper."""
    offenders = []
    holder_modules = {rel.removesuffix(".py").replace("/", ".") for rel in HOLDERS}
    for rel, path in python_files():
        if rel in HOLDERS or rel.startswith(ALLOWED_DIRS) or rel == "streams/client.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in holder_modules:
                offenders += [f"{rel}:{node.lineno}" for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Attribute) and node.attr in ("_client", "_clients"):
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []


def test_the_exit_check_finds_a_raw_client_handed_out():
    assert raw_client_exits("def upstream() -> AsyncDurableStreamClient:\n    return x()\n")
    pooled = "_clients = per_loop(async_service_client)\ndef upstream():\n    return _clients()\n"
    assert raw_client_exits(pooled) == ["upstream() returns a raw client"]
    assert raw_client_exits("client = service_client()\n") == ["client holds a raw client"]
    stored = "class R:\n    def __init__(self):\n        self.client = service_client()\n"
    assert raw_client_exits(stored) == ["client holds a raw client"]
    private = (
        "class R:\n    def __init__(self, c: DurableStreamClient):\n        self._client = c\n"
    )
    assert raw_client_exits(private) == []


def test_the_log_readers_are_read_only():
    from threads.log import AsyncLogReader, LogReader

    reads = {"head", "read", "catch_up", "long_poll", "tail", "sse"}
    for cls in (LogReader, AsyncLogReader):
        public = {name for name in vars(cls) if not name.startswith("_")}
        assert public <= reads, public - reads
        assert not hasattr(cls, "__getattr__")


APPS = (
    "arbe_site",
    "arbe_lib",
    "streams",
    "houses",
    "threads",
    "dispatch",
    "boards",
    "cli",
    "search",
    "attachments",
    "notify",
    "ops",
    "archives",
)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, at the top or inside a function."""
    modules = {}
    for rel, path in python_files():
        parts = rel.removesuffix(".py").split("/")
        if parts[0] in APPS and "management" not in parts:
            modules[".".join(parts).removesuffix(".__init__")] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_modules_import_each_other_one_way():
    """Dependencies point one way: no module reaches itself through its imports, lazy
    imports included (the write seam, dispatch and the sockets once ran in circles)."""
    assert cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_apps_never_import_the_sites_wiring():
    """``arbe_site`` (settings, urls, ASGI, middleware) imports the apps; the apps share
    ``arbe_lib``, never ``arbe_site``: the site's wiring sits on top, not in the middle."""
    graph = import_graph()
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if not module.startswith("arbe_site")
        for target in targets
        if target.startswith("arbe_site")
    )
    assert upward == []
