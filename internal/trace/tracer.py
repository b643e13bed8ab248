"""FeatBench's tracer: run pytest in this process under a profiling hook
(sys.setprofile on Python 3.11, sys.monitoring on 3.12 and later) and
write the object dependency graph of the repository's code it saw.

    python3 tracer.py --root /testbed --out trace.json --test tests/test_x.py -- PYTEST_ARGS...

A node is a function, method or class of the repository (a class is seen
when its body runs, at import), identified as path::qualname::line with the
line of its def/class keyword. An edge joins a call's nearest repository
caller to the callee, so calls made through code outside the repository
(the standard library, pytest, a dependency) are attributed to the
repository frame below them. Identity comes from the code object's
co_qualname and co_firstlineno, so methods of the same name in different
classes, or functions defined twice under one name, stay apart. A function
defined in another is its maker's callee too, and each function that ran
lists what its code references without calling (see References).

Standard library only; Python 3.11 or later (co_qualname).
"""

import ast
import builtins
import importlib.util
import inspect
import json
import os
import sys
import threading
import time
import types

VERSION = 1


def is_within(path, root):
    """Whether path is root or under it, by whole path components."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


class Repo:
    """Which files belong to the repository, and their syntax trees."""

    # Folders whose code is installed or generated, never the repository's.
    SKIP_PARTS = {"site-packages", "dist-packages", ".venv", "venv", ".tox", ".git", "__pycache__"}

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.rel = {}  # co_filename -> relative path, or None outside
        self.index = {}  # relative path -> FileIndex

    def relpath(self, filename):
        """The repository-relative path of a code object's file, or None."""
        rel = self.rel.get(filename, False)
        if rel is not False:
            return rel
        rel = None
        if filename.endswith(".py") and not filename.startswith("<"):
            real = os.path.realpath(filename)
            if is_within(real, self.root):
                r = os.path.relpath(real, self.root).replace(os.sep, "/")
                if not (set(r.split("/")) & self.SKIP_PARTS):
                    rel = r
        self.rel[filename] = rel
        return rel

    def file(self, rel):
        fi = self.index.get(rel)
        if fi is None:
            fi = FileIndex(os.path.join(self.root, rel))
            self.index[rel] = fi
        return fi


class Def:
    __slots__ = ("qualname", "line", "start", "end", "kind", "parent", "local", "node")

    def __init__(self, qualname, line, start, end, kind, parent, node=None):
        self.qualname, self.line, self.start, self.end = qualname, line, start, end
        self.kind, self.parent, self.node = kind, parent, node
        # Defined inside a function body: it exists only while its
        # parent runs, and cannot be removed apart from it.
        p = parent
        self.local = False
        while p is not None:
            if p.kind != "class":
                self.local = True
                break
            p = p.parent


def statements(node):
    """The statements a node holds directly, in source order, with its
    except handlers and match cases: where definitions can be (never in
    an expression), so the index walks no expressions."""
    for name in node._fields:
        v = getattr(node, name, None)
        if isinstance(v, list):
            for x in v:
                if isinstance(x, (ast.stmt, ast.excepthandler, ast.match_case)):
                    yield x


class FileIndex:
    """The def and class statements of one file, by qualified name and
    line, and its syntax tree (parsed once for every use)."""

    def __init__(self, path):
        self.defs = []
        self.by_first = {}  # (qualname, first line incl. decorators) -> Def
        self.by_line = {}  # (qualname, def line) -> Def
        self.by_name = {}  # qualname -> [Def]
        self.tree = None
        self.error = None  # why there is no tree
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), path)
        except (OSError, SyntaxError, ValueError) as e:
            self.error = e
            return
        self.tree = tree
        self._walk(tree, "", None, False)
        self.defs.sort(key=lambda d: (d.start, -d.end))

    def _walk(self, node, prefix, parent, in_class):
        for child in statements(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + child.name
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if in_class else "function"
                d = Def(qual, child.lineno, start, child.end_lineno, kind, parent, child)
                self.defs.append(d)
                self.by_first[(qual, start)] = d
                self.by_line[(qual, child.lineno)] = d
                self.by_name.setdefault(qual, []).append(d)
                self._walk(child, qual + ".", d, isinstance(child, ast.ClassDef))
            else:
                # Statements that hold definitions: if, try, with, for, ...
                self._walk(child, prefix, parent, in_class)

    def enclosing(self, line):
        """The innermost def or class whose span holds line, or None."""
        best = None
        for d in self.defs:
            if d.start <= line <= d.end and (best is None or d.start >= best.start):
                best = d
        return best

    def resolve(self, qualname, first):
        """The Def of a code object: by qualified name (with <locals>
        removed) and first line; a lambda, comprehension or generator
        expression is its enclosing def's."""
        q = qualname.replace("<locals>.", "")
        d = self.by_first.get((q, first)) or self.by_line.get((q, first))
        if d is not None:
            return d
        last = q.rsplit(".", 1)[-1]
        if last.startswith("<"):
            return self.enclosing(first)
        cands = self.by_name.get(q)
        if cands and len(cands) == 1:
            return cands[0]
        return self.enclosing(first)


# An edge's key packs two ids (addresses, below 2**64) into one int.
EDGE_SHIFT = 64
EDGE_MASK = (1 << EDGE_SHIFT) - 1

# The event budget (docs/collection.md, "Call counts"). Collection uses a
# graph's nodes and edges, not its call counts; a hot loop repeats the same
# (caller, callee) pairs millions of times, and each repeat costs a call of
# the hook. On sys.monitoring (Python 3.12 and later) a repository code
# location that has had BUDGET events since its last new caller is
# disabled (sys.monitoring.DISABLE) until the next test starts, when every
# location is enabled again (restart_events). On sys.setprofile (3.11),
# which cannot disable one location, the thread that runs the tests drops
# its hook after QUIET repository calls without a new edge, and gets it
# back when the next test starts. Either way the counts are lower bounds
# from then on (the graph's counts are "bounded"). FEATBENCH_TRACE_BUDGET
# and FEATBENCH_TRACE_QUIET set them; 0 turns the budget off.
#
# The sys.monitoring budget loses no node (a code location never seen has
# no budget spent) and, in practice, next to no edge: only a new caller of
# a disabled location within the same test. The sys.setprofile one is off
# by default: dropping the hook also hides code that runs once after the
# hot loop, in the same test (sortedcontainers' stress tests lost up to 4
# nodes and 21 edges with 200,000; docs/performance.md).
BUDGET = 1000
QUIET = 0
NO_LIMIT = 1 << 62


def budget_setting(name, default):
    v = os.environ.get(name)
    n = default if v is None or v == "" else int(v)
    return n if n > 0 else NO_LIMIT


class Tracer:
    def __init__(self, repo):
        self.repo = repo
        self.codes = {}  # id(code) -> code, kept alive so ids stay unique
        self.calls = {}  # id(code) -> call events
        # id(nearest repository caller's code) shifted by EDGE_SHIFT,
        # plus id(callee code). An int, not a tuple: a new tuple is an
        # object the garbage collector tracks, which a test that counts
        # gc.get_objects() sees (sortedcontainers' test_ref_counts).
        self.edges = set()
        self.flushes = []  # each profile function's pending counts
        self.budget = budget_setting("FEATBENCH_TRACE_BUDGET", BUDGET)
        self.quiet = budget_setting("FEATBENCH_TRACE_QUIET", QUIET)
        # Repository events not seen because of the budget: a location
        # disabled (sys.monitoring) or the hook dropped (sys.setprofile).
        self.bounded = 0
        self.resets = []  # what each test's start does (test_started)

    def make_profile(self, monitoring=False, budget=False):
        """The hook: a profile function for one thread, or with monitoring
        the callback of sys.monitoring's PY_START, PY_RESUME and PY_THROW
        events (Python 3.12 and later), the events setprofile calls
        "call".

        A profile function runs on every event of every frame, and under
        it Python 3.11 runs each instruction unspecialized and gives every
        frame a frame object, so what it does per event is most of the
        tracer's cost (docs/performance.md). Every event but a call
        returns at once, and a call outside the repository after one
        lookup by file name; sys.monitoring goes further and stops
        reporting a code location outside the repository after its first
        event (DISABLE). A call of repository code from repository code is
        a pair (caller, callee) that loops repeat, one pair after another
        or two taking turns (a generator and what consumes it): the last
        two pairs are kept, and a call of either only counts, without the
        walk to the caller or the edge, which its first call recorded.

        With budget, the hook keeps to the event budget (BUDGET, QUIET):
        with monitoring a location is disabled once it has had self.budget
        events since its last new caller; without, the thread's hook is
        dropped once it has seen self.quiet repository calls without a
        new edge (only the thread that runs the tests: it alone gets its
        hook back when a test starts)."""
        relpath = self.repo.relpath
        rel = self.repo.rel
        codes, calls, edges = self.codes, self.calls, self.edges
        tracer = self
        # Events of each callee code since its last new edge, when its
        # pair was not kept (with monitoring).
        quiet = {}
        limit = self.budget if monitoring else self.quiet
        if not budget:
            limit = NO_LIMIT
        since = 0  # repository calls since the last new edge (setprofile)
        hit = False  # a location disabled since the last test start
        # The kept pairs: callee code, caller code, id(callee), calls not
        # yet in calls. The newest is the first. A pair is kept only once
        # its edge is recorded, and is read and replaced with no call in
        # between (no other thread runs there), so a thread that finds its
        # call in another's pair counts it rightly.
        a = ac = b = bc = None
        ak = bk = 0
        an = bn = 0

        def record(frame, code):
            # A repository call the kept pairs did not have: counted, and
            # its edge from the nearest repository frame below (calls made
            # through the standard library, pytest or a dependency are
            # that frame's work). True when the edge is new.
            nonlocal a, ac, ak, an, b, bc, bk, bn
            k = id(code)
            n = calls.get(k)
            if n is None:
                codes[k] = code
                calls[k] = 1
            else:
                calls[k] = n + 1
            f = frame.f_back
            immediate = True
            while f is not None:
                c = f.f_code
                fn = c.co_filename
                r = rel.get(fn, False)
                if r is False:
                    r = relpath(fn)
                if r is not None:
                    ck = id(c)
                    if ck not in codes:
                        codes[ck] = c
                    e = ck << EDGE_SHIFT | k
                    new = e not in edges
                    if new:
                        edges.add(e)
                    if immediate:
                        if bn:
                            calls[bk] += bn
                        b, bc, bk, bn = a, ac, ak, an
                        a, ac, ak, an = code, c, k, 0
                    return new
                immediate = False
                f = f.f_back
            return n is None

        if monitoring:
            DISABLE = sys.monitoring.DISABLE
            getframe = sys._getframe

            def hook(code, offset, exc=None):
                # The frame that started or resumed is the callback's
                # caller. A PY_THROW (exc given) cannot be disabled. A
                # kept pair's count is its calls since it was recorded,
                # all from a caller already recorded: past the budget,
                # the location is disabled until the next test starts.
                nonlocal an, bn
                if code is a or code is b:
                    f = getframe(1).f_back
                    if f is not None:
                        c = f.f_code
                        if code is a and c is ac:
                            an += 1
                            if an >= limit and exc is None:
                                return spent()
                            return
                        if code is b and c is bc:
                            bn += 1
                            if bn >= limit and exc is None:
                                return spent()
                            return
                fn = code.co_filename
                r = rel.get(fn, False)
                if r is False:
                    r = relpath(fn)
                if r is None:
                    return DISABLE if exc is None else None
                k = id(code)
                if record(getframe(1), code):
                    quiet[k] = 0
                    return
                q = quiet.get(k, 0) + 1
                quiet[k] = q
                if q >= limit and exc is None:
                    return spent()

            def spent():
                # Past the budget: the location is disabled until the
                # next test starts (reset).
                nonlocal hit
                hit = True
                tracer.bounded += 1
                return DISABLE
        else:
            def hook(frame, event, arg):
                # The fewer names it closes over, the less each event
                # costs: every event copies them into the function's frame.
                nonlocal an, bn, since
                if event != "call":
                    return
                code = frame.f_code
                if code is a or code is b:
                    f = frame.f_back
                    if f is not None:
                        c = f.f_code
                        if code is a and c is ac:
                            an += 1
                            since += 1
                            if since >= limit:
                                stop()
                            return
                        if code is b and c is bc:
                            bn += 1
                            since += 1
                            if since >= limit:
                                stop()
                            return
                fn = code.co_filename
                r = rel.get(fn, False)
                if r is False:
                    r = relpath(fn)
                if r is not None:
                    if record(frame, code):
                        since = 0
                    else:
                        since += 1
                        if since >= limit:
                            stop()

            def stop():
                # Past the budget: this thread runs unhooked until the
                # next test starts (reset).
                nonlocal hit
                sys.setprofile(None)
                hit = True
                tracer.bounded += 1

        def flush():
            nonlocal an, bn
            if an:
                calls[ak] += an
                an = 0
            if bn:
                calls[bk] += bn
                bn = 0

        def reset():
            # A test starts: its callers are new again. The kept pairs go
            # (their counts would be past the budget at once), and what
            # the budget turned off comes back.
            nonlocal a, ac, ak, b, bc, bk, since, hit
            flush()
            a = ac = b = bc = None
            ak = bk = 0
            since = 0
            quiet.clear()
            if hit:
                hit = False
                if monitoring:
                    sys.monitoring.restart_events()
                else:
                    sys.setprofile(hook)

        self.flushes.append(flush)
        if budget:
            self.resets.append(reset)
        return hook

    def test_started(self):
        """A test starts (pytest_runtest_setup, or the caller of
        trace_run): the event budget starts again."""
        for r in self.resets:
            r()

    def start_thread(self, frame, event, arg):
        """threading.setprofile's function: a new thread's first event
        gives it a profile function of its own."""
        prof = self.make_profile()
        sys.setprofile(prof)
        prof(frame, event, arg)

    def flush(self):
        for f in self.flushes:
            f()

    def node_of(self, code):
        """(id, record, Def or None) of the node a code object belongs to."""
        rel = self.repo.relpath(code.co_filename)
        fi = self.repo.file(rel)
        if code.co_name == "<module>":
            return module_node(rel) + (None,)
        d = fi.resolve(code.co_qualname, code.co_firstlineno)
        if d is None:
            return module_node(rel) + (None,)
        return def_node(rel, d) + (d,)

    def graph(self):
        nodes = {}
        node_of = {}
        local = {}  # id -> (file, Def) of the local nodes
        funcs = {}  # id -> (file, Def) of the functions and methods
        for k, code in self.codes.items():
            nid, rec, d = self.node_of(code)
            node_of[k] = nid
            if nid not in nodes:
                nodes[nid] = rec
                if d is not None and d.local:
                    local[nid] = (rec["file"], d)
                if d is not None and d.kind != "class":
                    funcs[nid] = (rec["file"], d)
        for k, n in self.calls.items():
            nodes[node_of[k]]["calls"] += n
        for e in self.edges:
            caller, callee = e >> EDGE_SHIFT, e & EDGE_MASK
            a, b = node_of[caller], node_of[callee]
            if a != b:
                nodes[a]["callees"].add(b)
        # A function defined in another one (a closure a factory returns, a
        # decorator's wrapper) is called later, by whoever holds it: what
        # it calls is still the work of the function that made it. The
        # maker gets it as a callee, so that a walk from the maker goes on
        # through it; its parent ran to define it, so it is a node too.
        todo = list(local.items())
        while todo:
            nid, (rel, d) = todo.pop()
            pid, prec = def_node(rel, d.parent)
            if pid not in nodes:
                nodes[pid] = prec
                if d.parent.local:
                    todo.append((pid, (rel, d.parent)))
            nodes[pid]["callees"].add(nid)
        # What the functions that ran name without calling: a method taken
        # as a value (self.islice = _list.islice), a function passed on.
        refs = References(self.repo)
        for nid, (rel, d) in funcs.items():
            try:
                r = refs.of(rel, d)
            except Exception:  # the calls are still worth having
                continue
            r.discard(nid)
            if r:
                nodes[nid]["refs"] = sorted(r)
        out = []
        for nid in sorted(nodes):
            rec = nodes[nid]
            rec["callees"] = sorted(rec["callees"])
            out.append(rec)
        return out


def module_node(rel):
    nid = "%s::<module>::0" % rel
    return nid, {"id": nid, "file": rel, "qualname": "<module>", "line": 0, "start": 0, "end": 0,
                 "kind": "module", "calls": 0, "callees": set()}


def def_node(rel, d):
    nid = "%s::%s::%d" % (rel, d.qualname, d.line)
    rec = {"id": nid, "file": rel, "qualname": d.qualname, "line": d.line, "start": d.start, "end": d.end,
           "kind": d.kind, "calls": 0, "callees": set()}
    if d.local:
        rec["local"] = True
    return nid, rec


# --- the test file's imports, for the classifier -----------------------------

class Usage(ast.NodeVisitor):
    """Counts the uses of imported names, and of attributes reached through
    them, in the whole file, in assert statements, in unittest's assert*
    calls, and in pytest.raises blocks (which assert that the code inside
    raises)."""

    def __init__(self, names):
        # bound name -> its import records: one, or for "import pkg" and
        # "import pkg.sub" in one file (both bind pkg), each of them.
        self.names = names
        self.in_assert = 0

    def count(self, rec, attr):
        c = rec
        if attr is not None:
            c = c["attrs"].setdefault(attr, {"uses": 0, "assert_uses": 0})
        c["uses"] += 1
        if self.in_assert:
            c["assert_uses"] += 1

    def visit_Assert(self, node):
        self.in_assert += 1
        self.generic_visit(node)
        self.in_assert -= 1

    def visit_Call(self, node):
        # self.assertEqual(f(x), y), self.assertRaises(E, f, x): the
        # arguments are what the test asserts about, as in an assert.
        if is_assert_call(node):
            self.visit(node.func)
            self.in_assert += 1
            for a in node.args:
                self.visit(a)
            for k in node.keywords:
                self.visit(k)
            self.in_assert -= 1
            return
        self.generic_visit(node)

    def visit_With(self, node):
        raises = any(is_raises(item.context_expr) for item in node.items)
        for item in node.items:
            self.visit(item)
        if raises:
            self.in_assert += 1
        for stmt in node.body:
            self.visit(stmt)
        if raises:
            self.in_assert -= 1

    def visit_Attribute(self, node):
        chain = []
        v = node
        while isinstance(v, ast.Attribute):
            chain.append(v.attr)
            v = v.value
        if isinstance(v, ast.Name) and v.id in self.names:
            chain.reverse()
            # "import pkg.mod" binds pkg: in pkg.mod.f, f is what pkg.mod
            # provides. An aliased or from-import binds the module itself.
            # Of "import pkg" and "import pkg.mod" in one file, the longest
            # module the chain goes through is the one it uses.
            recs = self.names[v.id]
            best = None
            for rec in recs:
                depth = rec["dotted"]
                if chain[:depth] == rec["module"].split(".")[1:depth + 1] and (best is None or depth > best["dotted"]):
                    best = rec
            if best is None:
                best = recs[0]
            depth = best["dotted"]
            self.count(best, chain[depth] if len(chain) > depth else None)
            return
        self.generic_visit(node)

    def visit_Constant(self, node):
        # NodeVisitor's own looks up the visit_Num and visit_Str of
        # old Pythons for every constant; a constant holds nothing.
        pass

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            self.count(self.names[node.id][0], None)


# unittest's old names for its assertions.
UNITTEST_FAIL = {"fail", "failIf", "failUnless", "failIfEqual", "failUnlessEqual", "failUnlessRaises",
                 "failIfAlmostEqual", "failUnlessAlmostEqual"}


def is_assert_call(node):
    """Whether a call asserts: self.assertX(...), unittest's fail*
    aliases, or an assert_x(...) helper (numpy.testing, nose)."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name.startswith("assert") or name in UNITTEST_FAIL


def is_raises(expr):
    f = expr.func if isinstance(expr, ast.Call) else None
    if isinstance(f, ast.Attribute) and f.attr in ("raises", "warns", "assertRaises", "assertRaisesRegex",
                                                   "assertWarns", "assertWarnsRegex"):
        return True
    return isinstance(f, ast.Name) and f.id in ("raises", "warns")


def describe_object(repo, obj):
    """(kind, id, file) of an imported object: where it is defined."""
    if isinstance(obj, types.ModuleType):
        f = getattr(obj, "__file__", None)
        rel = repo.relpath(f) if f else None
        return ("repo-module" if rel else "external-module"), None, rel
    try:
        target = inspect.unwrap(obj)
    except Exception:
        target = obj
    if isinstance(target, (staticmethod, classmethod)):
        target = target.__func__
    # Objects that answer any attribute (proxies, mocks, sqlparse's token
    # types) must not pass for functions: only a real code object counts.
    code = getattr(target, "__code__", None) if callable(target) else None
    if not isinstance(code, types.CodeType):
        code = None
    if code is not None:
        rel = repo.relpath(code.co_filename)
        if rel is None:
            return "external", None, None
        d = repo.file(rel).resolve(code.co_qualname, code.co_firstlineno)
        if d is None:
            return "repo-value", None, rel
        return "repo-object", def_node(rel, d)[0], rel
    if isinstance(target, type):
        try:
            f = inspect.getsourcefile(target)
        except (TypeError, OSError):
            f = None
        rel = repo.relpath(f) if f else None
        if rel is None:
            return "external", None, None
        q = target.__qualname__.replace("<locals>.", "")
        cands = repo.file(rel).by_name.get(q)
        if not cands:
            return "repo-value", None, rel
        return "repo-object", def_node(rel, cands[-1])[0], rel
    mod = getattr(obj, "__module__", None)
    m = sys.modules.get(mod) if isinstance(mod, str) else None
    f = getattr(m, "__file__", None) if m else None
    rel = repo.relpath(f) if f else None
    return ("repo-value" if rel else "external"), None, rel


def test_imports(repo, test_file):
    """The test file's import statements, what each name is, and how the
    file uses it."""
    fi = repo.file(test_file)
    tree = fi.tree
    if tree is None:
        return [], "cannot parse %s: %s" % (test_file, fi.error)
    pkg = os.path.dirname(test_file).replace("/", ".")
    records = []
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                mod = sys.modules.get(a.name)
                kind, _, rel = describe_object(repo, mod) if mod else ("unresolved", None, None)
                bound = a.asname or a.name.split(".")[0]
                # "import a.b.c" binds a; attributes are reached past a.b.c
                dotted = 0 if a.asname else a.name.count(".")
                rec = {"line": node.lineno, "module": a.name, "name": "", "alias": a.asname or "", "kind": kind,
                       "id": "", "file": rel or "", "uses": 0, "assert_uses": 0, "attrs": {}, "dotted": dotted,
                       "target": mod, "plain": not a.asname}
                records.append(rec)
                prev = names.get(bound)
                if not a.asname and prev and all(r["plain"] for r in prev):
                    # "import pkg" and "import pkg.sub" both bind pkg,
                    # the package: the later one does not replace it.
                    prev.append(rec)
                else:
                    names[bound] = [rec]
        elif isinstance(node, ast.ImportFrom):
            modname = node.module or ""
            if node.level:
                base = pkg.split(".") if pkg else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                modname = ".".join([p for p in base if p] + ([node.module] if node.module else []))
            mod = sys.modules.get(modname)
            for a in node.names:
                if a.name == "*":
                    continue
                obj = getattr(mod, a.name, None) if mod is not None else None
                if obj is None and mod is not None:
                    obj = sys.modules.get(modname + "." + a.name)
                if obj is None:
                    kind, oid, rel = "unresolved", None, None
                else:
                    kind, oid, rel = describe_object(repo, obj)
                rec = {"line": node.lineno, "module": modname, "name": a.name, "alias": a.asname or "",
                       "kind": kind, "id": oid or "", "file": rel or "", "uses": 0, "assert_uses": 0,
                       "attrs": {}, "dotted": 0, "target": obj, "plain": False}
                records.append(rec)
                names[a.asname or a.name] = [rec]
    Usage(names).visit(tree)
    out = []
    for rec in records:
        target = rec.pop("target")
        rec.pop("dotted")
        rec.pop("plain")
        attrs = []
        for name in sorted(rec["attrs"]):
            c = rec["attrs"][name]
            obj = target
            for part in name.split("."):
                obj = getattr(obj, part, None) if obj is not None else None
            kind, oid, rel = describe_object(repo, obj) if obj is not None else ("unresolved", None, None)
            attrs.append({"name": name, "kind": kind, "id": oid or "", "file": rel or "", "uses": c["uses"],
                          "assert_uses": c["assert_uses"]})
        rec["attrs"] = attrs
        out.append(rec)
    out.sort(key=lambda r: (r["line"], r["module"], r["name"]))
    return out, ""


# --- what modules reference when they are imported ----------------------------

class ImportTimeRefs(ast.NodeVisitor):
    """Collects the names and attribute chains a module's import-time code
    loads: module level and class bodies, decorators and default values,
    but not function bodies, which run only when called.

    In a class body a name already bound there is the class's own (Python
    looks in the class's namespace first): such loads are class_refs. A
    class-body alias of a member (``__or__ = union``) is no reference: the
    masker removes it with the member it names."""

    def __init__(self):
        self.refs = []  # lists of names: ["case", "snake_case"]
        self.class_refs = []  # ([class, nested class, ...], [name, attr, ...])
        self.imports = []  # (level, module, names) of from-imports
        self.bound = {}  # name bound by "import X" -> the module's name
        self.scope = None  # the class body being visited: (path, names bound so far)
        self.comp = 0  # inside a comprehension's own scope

    def visit_FunctionDef(self, node):
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        for x in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(x)
        outer = self.scope
        path = (outer[0] if outer else []) + [node.name]
        self.scope = (path, set())
        for st in node.body:
            self.visit(st)
            self.scope[1].update(binds(st))
        self.scope = outer

    def visit_Assign(self, node):
        if self.scope is not None and member_alias(node, self.scope[1]):
            return
        self.generic_visit(node)

    def visit_Lambda(self, node):
        self.visit(node.args)

    def _comprehension(self, node):
        # Only the first iterable runs in the enclosing scope.
        first = node.generators[0]
        self.visit(first.iter)
        self.comp += 1
        for n in ast.iter_child_nodes(node):
            if not isinstance(n, ast.comprehension):
                self.visit(n)  # the element, or a dict's key and value
        for gen in node.generators:
            for n in [gen.target] + gen.ifs + ([gen.iter] if gen is not first else []):
                self.visit(n)
        self.comp -= 1

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Import(self, node):
        for a in node.names:
            if a.asname:
                self.bound[a.asname] = a.name
            else:
                first = a.name.split(".")[0]
                self.bound[first] = first

    def visit_ImportFrom(self, node):
        if node.module is not None or node.level:
            self.imports.append((node.level, node.module or "", [a.name for a in node.names if a.name != "*"]))

    def _ref(self, chain):
        if self.scope is not None and not self.comp and chain[0] in self.scope[1]:
            self.class_refs.append((self.scope[0], chain))
        else:
            self.refs.append(chain)

    visit_Constant = Usage.visit_Constant

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self._ref([node.id])

    def visit_Attribute(self, node):
        chain = []
        v = node
        while isinstance(v, ast.Attribute):
            chain.append(v.attr)
            v = v.value
        if isinstance(v, ast.Name):
            chain.append(v.id)
            chain.reverse()
            self._ref(chain)
        else:
            self.generic_visit(node)


def binds(st):
    """The names a statement binds in the scope it runs in (not inside the
    functions, lambdas and comprehensions it holds)."""
    out = set()

    def visit(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            return
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        for c in ast.iter_child_nodes(n):
            visit(c)

    visit(st)
    return out


def member_alias(st, members):
    """Whether a class-body statement only gives a member another name
    (``__or__ = union``): it goes with the member, as the masker removes
    it."""
    return (isinstance(st, ast.Assign) and isinstance(st.value, ast.Name) and st.value.id in members
            and all(isinstance(t, ast.Name) for t in st.targets))


def class_aliases(cls):
    """A class body's aliases of its members, name -> the name it copies
    (if and try blocks of the body included)."""
    out = {}
    bound = set()

    def scan(stmts):
        for st in stmts:
            if member_alias(st, bound):
                for t in st.targets:
                    out[t.id] = st.value.id
            elif isinstance(st, (ast.If, ast.Try, ast.With)):
                for field in ("body", "orelse", "finalbody"):
                    scan(getattr(st, field, None) or [])
                for h in getattr(st, "handlers", None) or []:
                    scan(h.body)
            bound.update(binds(st))

    scan(cls.body)
    return out


def import_refs(repo):
    """Ids of the repository's functions and classes that the import-time
    code of loaded repository modules references. Removing one breaks the
    import of the module that references it, even though no call to it was
    traced (a function registered in a table, an alias, a default)."""
    out = set()
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        rel = repo.relpath(f) if isinstance(f, str) else None
        if rel is None:
            continue
        tree = repo.file(rel).tree
        if tree is None:
            continue
        v = ImportTimeRefs()
        v.visit(tree)
        g = getattr(mod, "__dict__", {})
        # A name imported from a module that only re-exports it (a package,
        # another module's star import) is a reference: the masker rewrites
        # imports from the defining module only.
        pkg = mod.__name__ if rel.endswith("__init__.py") else mod.__name__.rpartition(".")[0]
        for level, module, names in v.imports:
            try:
                src = sys.modules.get(importlib.util.resolve_name("." * level + module, pkg) if level else module)
            except (ImportError, ValueError):
                src = None
            sf = getattr(src, "__file__", None)
            srel = repo.relpath(sf) if isinstance(sf, str) else None
            if srel is None:
                continue
            for n in names:
                obj = getattr(src, "__dict__", {}).get(n)
                if obj is None or isinstance(obj, types.ModuleType):
                    continue
                try:
                    kind, oid, orel = describe_object(repo, obj)
                except Exception:
                    continue
                if kind == "repo-object" and oid and orel != srel:
                    out.add(oid)
        seen = set()
        for chain in v.refs:
            key = tuple(chain)
            if key in seen:
                continue
            seen.add(key)
            obj = g.get(chain[0])
            if obj is None and chain[0] in v.bound:
                # Imported, used, then deleted ("del toolz" at the end of
                # toolz.curried): the module is still the one imported.
                obj = sys.modules.get(v.bound[chain[0]])
            chain_refs(repo, obj, chain[1:], out)
        for path, chain in v.class_refs:
            cls = g.get(path[0])
            for part in path[1:]:
                try:
                    cls = inspect.getattr_static(cls, part, None)
                except Exception:
                    cls = None
            if isinstance(cls, type):
                chain_refs(repo, cls.__dict__.get(chain[0]), chain[1:], out)
        abstract_overrides(repo, mod, out)
        total_ordering_roots(repo, mod, out)
    return sorted(out)


def chain_refs(repo, obj, attrs, out):
    """References of a chain obj.attr1.attr2...: each step names an
    object, a.b.c references a and a.b too."""
    if obj is None:
        return
    add_ref(repo, obj, out)
    for part in attrs:
        try:
            obj = inspect.getattr_static(obj, part, None)
        except Exception:
            obj = None
        if obj is None:
            return
        add_ref(repo, obj, out)


ORDERING = ("__lt__", "__le__", "__gt__", "__ge__")


def total_ordering_roots(repo, mod, out):
    """The comparison functools.total_ordering derived a class's others
    from: without one, the decorator fails the import ("must define at
    least one ordering operation")."""
    for obj in list(vars(mod).values()):
        if not isinstance(obj, type) or getattr(obj, "__module__", None) != mod.__name__:
            continue
        own = obj.__dict__
        if not any(getattr(own.get(op), "__module__", None) == "functools" for op in ORDERING):
            continue
        roots = []
        for op in ORDERING:
            try:
                f = inspect.getattr_static(obj, op, None)
            except Exception:
                continue
            if f is not None and f is not getattr(object, op, None) and getattr(f, "__module__", None) != "functools":
                roots.append(op)
        if roots:
            # total_ordering's choice among several: the greatest name.
            add_ref(repo, inspect.getattr_static(obj, max(roots)), out)


# --- what the functions that ran reference ------------------------------------

class References:
    """The repository's functions and classes that a function's own code
    names without calling them, read from its syntax tree: a global or an
    attribute of one (a module's function, a class's method), a name a
    function-level import binds, and an attribute taken from a local value
    (self._list.islice), which can be any repository method of that name.
    Only the function's own code counts (lambdas and comprehensions
    included, nested def bodies not: they are nodes of their own). A name
    in a call's function position is left out: a call that ran is an edge,
    one that did not run needs nothing."""

    def __init__(self, repo):
        self.repo = repo
        self._modules = None  # relative path -> module
        self._methods = None  # method name -> ids
        self._aliases = {}  # id(class node) -> class_aliases

    def modules(self):
        if self._modules is None:
            self._modules = {}
            for mod in list(sys.modules.values()):
                f = getattr(mod, "__file__", None)
                rel = self.repo.relpath(f) if isinstance(f, str) else None
                if rel is not None and rel not in self._modules:
                    self._modules[rel] = mod
        return self._modules

    def methods(self, name):
        """Ids of the loaded repository modules' methods named name, or
        that a class-body alias of that name copies (bisect =
        bisect_right)."""
        if self._methods is None:
            self._methods = {}
            for rel in sorted(self.modules()):
                fi = self.repo.file(rel)
                for d in fi.defs:
                    if d.kind == "method" and not d.local:
                        self._methods.setdefault(d.qualname.rsplit(".", 1)[-1], set()).add(def_node(rel, d)[0])
                    elif d.kind == "class" and not d.local and d.node is not None:
                        for alias in self.aliases(d):
                            for m in self.members(rel, d, alias, d.end + 1):
                                self._methods.setdefault(alias, set()).add(def_node(rel, m)[0])
        return self._methods.get(name, ())

    def aliases(self, cls):
        a = self._aliases.get(id(cls.node))
        if a is None:
            a = self._aliases[id(cls.node)] = class_aliases(cls.node)
        return a

    def members(self, rel, cls, name, before):
        """The defs of class cls that its name stands for on a line before
        the given one: the defs of that name, or those an alias of it
        copies."""
        fi = self.repo.file(rel)
        aliases = self.aliases(cls)
        seen = set()
        while name in aliases and name not in seen:
            seen.add(name)
            name = aliases[name]
        return [d for d in fi.by_name.get(cls.qualname + "." + name, []) if d.line < before and d.parent is cls]

    def of(self, rel, d):
        node = d.node
        if node is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return set()
        mod = self.modules().get(rel)
        g = getattr(mod, "__dict__", {})
        pkg = ""
        if mod is not None:
            pkg = mod.__name__ if rel.endswith("__init__.py") else mod.__name__.rpartition(".")[0]
        body = FunctionBody(node)
        out = set()
        if d.kind == "method" and d.parent is not None and d.parent.node is not None:
            # A method's decorators run in its class's body: @value.setter
            # needs the getter, @show.register the method it registers with.
            for dec in node.decorator_list:
                for n in ast.walk(dec):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                        for m in self.members(rel, d.parent, n.id, d.line):
                            out.add(def_node(rel, m)[0])
        for chain, called in body.chains:
            root = chain[0]
            obj = None
            if root in body.imports:
                obj = import_target(body.imports[root], pkg)
            elif root in body.locals:
                # self, an argument, a local: only an attribute's name is
                # known, and any method of that name may be the one.
                for part in (chain[1:-1] if called else chain[1:]):
                    out.update(self.methods(part))
                continue
            else:
                obj = g.get(root)
            if obj is None:
                continue
            steps = [obj]
            for part in chain[1:]:
                try:
                    obj = inspect.getattr_static(obj, part, None)
                except Exception:
                    obj = None
                if obj is None:
                    break
                steps.append(obj)
            if called and len(steps) == len(chain):
                steps.pop()
            for o in steps:
                add_ref(self.repo, o, out)
        return out


class FunctionBody(ast.NodeVisitor):
    """A function's local names, its function-level imports, and the name
    and attribute chains its own code loads, each with whether it is a
    call's function."""

    def __init__(self, node):
        self.locals = set()
        self.imports = {}  # bound name -> (level, module, name or None, alias given)
        self.chains = []  # ([root, attr, ...], called)
        self.globals = set()
        self.calls = set()
        a = node.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]:
            self.locals.add(arg.arg)
        for st in node.body:
            self.visit(st)
        self.locals -= self.globals
        for name in self.imports:
            self.locals.discard(name)

    def visit_Global(self, node):
        self.globals.update(node.names)

    def visit_Nonlocal(self, node):
        self.locals.update(node.names)  # an enclosing function's: not resolvable here

    def visit_FunctionDef(self, node):
        # The definition runs here (decorators, defaults); its body does not.
        self.locals.add(node.name)
        for x in node.decorator_list:
            self.visit(x)
        for x in node.args.defaults + [x for x in node.args.kw_defaults if x is not None]:
            self.visit(x)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.locals.add(node.name)
        for x in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(x)

    def visit_Lambda(self, node):
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self.locals.add(arg.arg)
        self.generic_visit(node)

    def visit_Import(self, node):
        for a in node.names:
            if a.asname:
                self.imports[a.asname] = (0, a.name, None, True)
            else:
                self.imports[a.name.split(".")[0]] = (0, a.name.split(".")[0], None, False)

    def visit_ImportFrom(self, node):
        for a in node.names:
            if a.name != "*":
                self.imports[a.asname or a.name] = (node.level, node.module or "", a.name, True)

    def visit_ExceptHandler(self, node):
        if node.name:
            self.locals.add(node.name)
        self.generic_visit(node)

    def visit_Call(self, node):
        self.calls.add(id(node.func))
        self.generic_visit(node)

    visit_Constant = Usage.visit_Constant

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.chains.append(([node.id], id(node) in self.calls))
        else:
            self.locals.add(node.id)

    def visit_Attribute(self, node):
        if not isinstance(node.ctx, ast.Load):
            self.visit(node.value)
            return
        chain = []
        v = node
        while isinstance(v, ast.Attribute):
            chain.append(v.attr)
            v = v.value
        chain.reverse()
        if isinstance(v, ast.Name):
            self.chains.append(([v.id] + chain, id(node) in self.calls))
        else:
            # foo().bar, x[0].bar: only the attribute names are known.
            self.chains.append((["<value>"] + chain, id(node) in self.calls))
            self.locals.add("<value>")
            self.visit(v)

    def visit_MatchAs(self, node):
        if node.name:
            self.locals.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self.locals.add(node.name)

    def visit_MatchMapping(self, node):
        if node.rest:
            self.locals.add(node.rest)
        self.generic_visit(node)


def import_target(spec, pkg):
    """The object a function-level import binds, from sys.modules."""
    level, module, name, aliased = spec
    try:
        full = importlib.util.resolve_name("." * level + module, pkg) if level else module
    except (ImportError, ValueError):
        return None
    mod = sys.modules.get(full)
    if name is None:
        return mod
    obj = getattr(mod, name, None) if mod is not None else None
    return obj if obj is not None else sys.modules.get(full + "." + name)


def abstract_overrides(repo, mod, out):
    """Methods of the module's classes that implement an abstract method
    of a base class: without one, the class can no longer be instantiated,
    which import-time code (a test helper's class body) may do."""
    for obj in list(vars(mod).values()):
        if not isinstance(obj, type) or getattr(obj, "__module__", None) != mod.__name__:
            continue
        names = set()
        for base in obj.__mro__[1:]:
            names |= set(getattr(base, "__abstractmethods__", ()))
        for n in names:
            if n in obj.__dict__:
                add_ref(repo, obj.__dict__[n], out)


def add_ref(repo, obj, out):
    try:
        kind, oid, _ = describe_object(repo, obj)
    except Exception:
        return
    if kind == "repo-object" and oid:
        out.add(oid)


def main(argv):
    root, out, tests, rest = None, None, [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest = argv[i + 1:]
            break
        if a in ("--root", "--out", "--test") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--root":
                root = v
            elif a == "--out":
                out = v
            else:
                tests.append(v)
            i += 2
            continue
        print("tracer: unknown argument %r" % a, file=sys.stderr)
        return 2
    if not root or not out:
        print("usage: tracer.py --root DIR --out FILE [--test FILE ...] -- PYTEST_ARGS", file=sys.stderr)
        return 2
    import pytest  # imported untraced: pytest is not the repository

    class Budget:
        """Each test's start restarts the event budget."""

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            test_started()

    result = trace_run(root, tests, rest, lambda: pytest.main(rest, plugins=[Budget()]))
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=None, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, out)
    return result["exit_code"]


def monitoring_tool():
    """A free sys.monitoring tool id, or None: Python 3.11 has no
    sys.monitoring, and the tracer hooks sys.setprofile there.
    FEATBENCH_TRACE_HOOK=setprofile asks for setprofile on any Python (to
    compare the two)."""
    m = getattr(sys, "monitoring", None)
    if m is None or os.environ.get("FEATBENCH_TRACE_HOOK") == "setprofile":
        return None
    for tool in (4, 3, m.PROFILER_ID):
        if m.get_tool(tool) is None:
            return tool
    return None


def run_monitored(tracer, tool, run_tests):
    """run_tests with the hook on sys.monitoring's events, every thread's
    (Python 3.12 and later)."""
    m = sys.monitoring
    ev = (m.events.PY_START, m.events.PY_RESUME, m.events.PY_THROW)
    hook = tracer.make_profile(monitoring=True, budget=True)
    m.use_tool_id(tool, "featbench tracer")
    try:
        for e in ev:
            m.register_callback(tool, e, hook)
        m.set_events(tool, ev[0] | ev[1] | ev[2])
        return run_tests()
    finally:
        m.set_events(tool, 0)
        for e in ev:
            m.register_callback(tool, e, None)
        m.free_tool_id(tool)
        tracer.resets.clear()
        tracer.flush()


def run_profiled(repo, tracer, run_tests):
    """run_tests with the hook on sys.setprofile, and on
    threading.setprofile for the threads it starts (Python 3.11)."""
    prof = tracer.make_profile(budget=True)
    main = threading.get_ident()
    real_exec = builtins.exec

    # This thread's hook starts when it first runs a body of the
    # repository's code: until then nothing of the repository can have
    # run in it (a module's body runs through exec, in the import system,
    # pytest's assertion rewriter and runpy alike), and pytest's own start
    # (plugins, configuration: a tenth of a small test file's events) goes
    # unhooked. exec is the builtin again from then on. Other threads are
    # hooked from their start, as always. (An audit hook cannot do it:
    # with one, every frame.f_code the hook reads is an audited event.)
    def exec_(source, globals=None, locals=None, /, **kw):
        if globals is None:
            # The caller's namespaces, as the builtin takes them.
            f = sys._getframe(1)
            globals = f.f_globals
            if locals is None:
                locals = f.f_locals
        if threading.get_ident() == main and builtins.exec is exec_:
            fn = getattr(source, "co_filename", None)
            if isinstance(fn, str) and repo.relpath(fn) is not None:
                builtins.exec = real_exec
                sys.setprofile(prof)
        return real_exec(source, globals, locals, **kw)

    # A repository module imported before the run (by a .pth file, or
    # whoever calls trace_run) can run without exec: hook at once.
    early = any(isinstance(getattr(m, "__file__", None), str) and repo.relpath(m.__file__) is not None
                for m in list(sys.modules.values()))
    threading.setprofile(tracer.start_thread)
    if early:
        sys.setprofile(prof)
    else:
        builtins.exec = exec_
    try:
        return run_tests()
    finally:
        if builtins.exec is exec_:
            builtins.exec = real_exec
        tracer.resets.clear()
        sys.setprofile(None)
        threading.setprofile(None)
        tracer.flush()


_tracer = None  # the Tracer of the run under way


def test_started():
    """Called when each test starts (pytest_runtest_setup; a runner of its
    own calls it too): the event budget starts again, so that a later
    test's new callers of code a hot loop exhausted are seen."""
    if _tracer is not None:
        _tracer.test_started()


def trace_run(root, tests, args, run_tests):
    """Run run_tests (pytest, or a test's own runner) under the hook and
    return the graph record: the nodes, import-time references and the
    test files' imports."""
    global _tracer
    repo = Repo(root)
    tracer = Tracer(repo)
    tool = monitoring_tool()
    start = time.monotonic()
    _tracer = tracer
    try:
        if tool is None:
            code = run_profiled(repo, tracer, run_tests)
        else:
            code = run_monitored(tracer, tool, run_tests)
    finally:
        _tracer = None
    seconds = time.monotonic() - start
    result = {"version": VERSION, "root": repo.root, "args": args, "exit_code": int(code),
              "seconds": round(seconds, 3), "python": sys.version.split()[0],
              "hook": "sys.setprofile" if tool is None else "sys.monitoring", "nodes": tracer.graph(),
              "counts": "bounded" if tracer.bounded else "exact",
              "imports": {}, "import_refs": [], "notes": []}
    if tracer.bounded:
        what = "code locations disabled" if tool is not None else "tests whose thread ran unhooked"
        result["notes"].append("call counts are lower bounds: the event budget (%s) was spent %d times (%s)" % (
            "%d events per location" % tracer.budget if tool is not None else "%d quiet calls" % tracer.quiet,
            tracer.bounded, what))
    try:
        result["import_refs"] = import_refs(repo)
    except Exception as e:  # the graph is still worth having
        result["notes"].append("import-time references not resolved: %s: %s" % (type(e).__name__, e))
    for t in tests:
        try:
            recs, err = test_imports(repo, t)
        except Exception as e:  # the graph is still worth having
            recs, err = [], "imports of %s not resolved: %s: %s" % (t, type(e).__name__, e)
        result["imports"][t] = recs
        if err:
            result["notes"].append(err)
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
