"""Grammar of MKL-DNN / DNNL / oneDNN verbose lines, every generation, in one place.

This module is the single source of truth for the format.  Each named piece below is a
small pyparsing element, and :func:`parse_shape` combines them to read one *distinct shape*
of a verbose line: the line without its per-call parts (the optional timestamp and the
trailing time).  The ingest layer (``loganalyze.importers.onednn``) lets DuckDB cut every
line into ``shape + timestamp + time`` and calls this grammar once per distinct shape, so a
log that repeats the same few hundred descriptors millions of times is parsed by pyparsing
a few hundred times.

Generations (see docs/formats.md for sources)::

    mkldnn_verbose,exec,<kind>,<impl>,<prop>,<mds>,<aux>,<problem>,<ms>             v0.x
    mkldnn_verbose,exec,<engine>,<kind>,<impl>,<prop>,<mds>,<aux>,<problem>,<ms>    v1.0
    dnnl_verbose[,<ts>],<op>,<engine>,<kind>,<impl>,<prop>,<mds>,<attrs>,<aux>,<problem>,<ms>
    onednn_verbose[,v1][,<ts>][,primitive|graph|common|ukernel],<op>,...            v1.1+ layout

Fields are separated by commas with no quoting.  Inside a field, sub-items are separated by
spaces and sub-sub-items by ``:``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field as dc_field
from functools import lru_cache

import pyparsing as pp

# --------------------------------------------------------------------------- leading fields
END_OF_FIELD = r"(?=,|$)"

#: what a verbose line starts with, one per generation (oneDNN, DNNL, MKL-DNN)
MARKERS = ("onednn_verbose", "dnnl_verbose", "mkldnn_verbose")
MARKER_PATTERN = "(?:" + "|".join(MARKERS) + ")"
VERSION_TOKEN_PATTERN = r"v\d+"
TIMESTAMP_PATTERN = r"\d+\.\d*"
#: the marker (with its optional version token) and the optional timestamp at the start of a
#: line, and what follows them (a comma, or the end of a marker-only line).  Plain enough for
#: Python's ``re`` and DuckDB's RE2 alike: the importer cuts lines with it in SQL.
LEADING_CUT_PATTERN = (f"^({MARKER_PATTERN}(?:,{VERSION_TOKEN_PATTERN})?)(,{TIMESTAMP_PATTERN})?"
                       r"(,|\r?\n$)")

marker = pp.Regex(MARKER_PATTERN + END_OF_FIELD)("marker")
version_token = pp.Regex(VERSION_TOKEN_PATTERN + END_OF_FIELD)("version")
timestamp = pp.Regex(TIMESTAMP_PATTERN + END_OF_FIELD)("timestamp")


def starts_with_marker(line: bytes | str, comma: bool = False) -> bool:
    """Whether ``line`` starts with a verbose marker (followed by a comma when ``comma``)."""
    if isinstance(line, bytes):
        prefixes = _MARKER_BYTES_COMMA if comma else _MARKER_BYTES
    else:
        prefixes = _MARKER_COMMA if comma else MARKERS
    return line.startswith(prefixes)


def head_has_verbose_line(head: bytes) -> bool:
    """Whether the first bytes of a file hold a verbose line (a marker and a comma at a
    line's start; the last, maybe cut, line counts only when it is the only one)."""
    return any(starts_with_marker(line, comma=True)
               for line in (head.split(b"\n")[:-1] if b"\n" in head else [head]))


_MARKER_COMMA = tuple(m + "," for m in MARKERS)
_MARKER_BYTES = tuple(m.encode() for m in MARKERS)
_MARKER_BYTES_COMMA = tuple(m.encode() for m in _MARKER_COMMA)
component = pp.Regex(r"(?:primitive|graph|common|ukernel)" + END_OF_FIELD)("component")
operation = pp.Regex(r"[^,]*")("operation")
rest_of_line = pp.Regex(r".+")("rest")

#: marker, then each optional and in this order: version token, timestamp, component; then
#: the operation and everything after it.  Written as one regex with named groups (the same
#: pieces as above) because pyparsing costs about 10 us per element it matches.
leading_fields = pp.Regex(
    "(?P<marker>" + marker.re.pattern + ")"
    + "(?:,(?P<version>" + version_token.re.pattern + "))?"
    + "(?:,(?P<timestamp>" + timestamp.re.pattern + "))?"
    + "(?:,(?P<component>" + component.re.pattern + "))?"
    + "(?:,(?P<operation>[^,]*)(?:,(?P<rest>.+))?)?$"
)

# --------------------------------------------------------------------------- comma fields
comma_field = pp.Regex(r"[^,]*")
#: a comma-separated record; fields may be empty (``,,`` between mds and aux).  One regex
#: match for the whole record (pyparsing costs ~10 us per element matched), split after.
comma_fields = pp.Regex(r"[^,]*(?:,[^,]*)*")("fields").add_parse_action(lambda t: [t[0].split(",")])


def split_fields(text: str) -> list[str]:
    """What ``comma_fields`` returns, without pyparsing's per-call overhead."""
    return text.split(",") if text else []

engine = pp.Regex(r"(?:cpu|gpu|cpu2gpu|gpu2cpu)(?::\d+)?$")("engine")

#: profiling layouts: the fields between the operation and the time
LAYOUTS: dict[str, tuple[str, ...]] = {
    "v0.x": ("kind", "impl", "prop_kind", "mds", "aux", "problem"),
    "v1.0": ("engine", "kind", "impl", "prop_kind", "mds", "aux", "problem"),
    "v1.1+": ("engine", "kind", "impl", "prop_kind", "mds", "attrs", "aux", "problem"),
}
LAYOUT_NAMES = {
    "v0.x": "v0.x (no engine, no attrs)",
    "v1.0": "v1.0 (engine, no attrs)",
    "v1.1+": "v1.1+ (engine and attrs)",
}

# --------------------------------------------------------------------------- memory descriptors
# v0.x:   fsrc:nChw8c   in:f32_nchw
# v1.x:   src_f32::blocked:aBcd8b:f0          (arg_dt:props:format_kind:tag:flags)
# v3.x:   src_f32:a:blocked:aBcd16b::f0       (arg_dt:props:format_kind:tag:strides:flags)
# v3.6+:  src:f32::blocked:abcd::f0           (arg:dt:props:format_kind:tag:strides:flags)
DATA_TYPES = (
    "undef f32 f16 bf16 f64 s32 s8 u8 s4 u4 f8_e5m2 f8_e4m3 e8m0 f4_e2m1 f4_e3m0 boolean bin"
).split()
data_type = pp.one_of(DATA_TYPES, as_keyword=True)
md_subfield = pp.Regex(r"[^:\s]*")
#: one descriptor: ``:``-separated sub-fields whose meaning depends on the generation
md_subfields = md_subfield + pp.ZeroOrMore(pp.Suppress(":") + md_subfield)
md_token = pp.Regex(r"\S+")


@dataclass
class MemoryDescriptor:
    arg: str
    dt: str = ""
    props: str = ""
    format_kind: str = ""
    tag: str = ""
    strides: str = ""
    flags: str = ""
    extra: str = ""


_DT_SUFFIX = re.compile(r"^(?P<arg>[a-z][a-z0-9_]*?)_(?P<dt>" + "|".join(DATA_TYPES) + r")$")


@lru_cache(maxsize=65536)
def parse_memory_descriptor(text: str) -> MemoryDescriptor:
    """One memory descriptor of any generation."""
    parts = list(md_subfields.parse_string(text, parse_all=True))
    head = parts[0]
    if len(parts) >= 3 and parts[1] in DATA_TYPES and "_" not in head.rstrip("_"):
        # v3.6+ ``src:f32::blocked:abcd::f0``
        arg, dt, rest = head, parts[1], parts[2:]
    elif len(parts) >= 3 and parts[1] in DATA_TYPES:
        # v3.6+ with an underscored arg name, e.g. ``diff_src:f32::blocked:...``
        arg, dt, rest = head, parts[1], parts[2:]
    else:
        m = _DT_SUFFIX.match(head)
        if m and len(parts) >= 2:
            arg, dt, rest = m.group("arg"), m.group("dt"), parts[1:]
        elif len(parts) == 2:
            # v0.x: ``fsrc:nChw8c`` or ``in:f32_nchw``
            arg, value = parts
            m2 = re.match(r"^(" + "|".join(DATA_TYPES) + r")_(.+)$", value)
            if m2:
                return MemoryDescriptor(arg=arg, dt=m2.group(1), tag=m2.group(2))
            return MemoryDescriptor(arg=arg, tag=value)
        else:
            return MemoryDescriptor(arg=head, extra=":".join(parts[1:]))
    # rest: props, format_kind, tag, [strides,] flags, [extras...]
    md = MemoryDescriptor(arg=arg, dt=dt)
    flag_at = next((i for i, p in enumerate(rest) if re.match(r"^f[0-9a-fA-F]+", p)), None)
    if flag_at is None:  # e.g. ``bia:undef::undef:::``: props, format_kind, tag, strides, flags
        padded = rest + [""] * (5 - len(rest))
        md.props, md.format_kind, md.tag, md.strides, md.flags = padded[:5]
        md.extra = ":".join(padded[5:])
        return md
    else:
        fields = rest[:flag_at]
        md.flags = rest[flag_at]
        md.extra = ":".join(rest[flag_at + 1:])
    if len(fields) >= 1:
        md.props = fields[0]
    if len(fields) >= 2:
        md.format_kind = fields[1]
    if len(fields) >= 3:
        md.tag = fields[2]
    if len(fields) >= 4:
        md.strides = ":".join(fields[3:])
    return md


memory_descriptors = pp.Group(pp.ZeroOrMore(md_token))("mds")


@lru_cache(maxsize=65536)
def parse_mds(text: str) -> tuple[MemoryDescriptor, ...]:
    tokens = memory_descriptors.parse_string(text, parse_all=True)["mds"]
    return tuple(parse_memory_descriptor(t) for t in tokens)


# --------------------------------------------------------------------------- attributes and aux
attr_token = pp.Regex(r"\S+")
attributes = pp.Group(pp.ZeroOrMore(attr_token))("attrs")
aux_item = pp.Group(pp.Regex(r"[^:\s]+")("key") + pp.Opt(pp.Suppress(":") + pp.Regex(r"\S*")("value")))
auxiliary = pp.Group(pp.ZeroOrMore(aux_item))("aux")


@lru_cache(maxsize=65536)
def parse_aux(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in auxiliary.parse_string(text, parse_all=True)["aux"]:
        out.append((item["key"], item.get("value", "")))
    return tuple(out)


@lru_cache(maxsize=65536)
def parse_attrs(text: str) -> tuple[str, ...]:
    return tuple(attributes.parse_string(text, parse_all=True)["attrs"])


# --------------------------------------------------------------------------- problem descriptors
# conv:   [g<g>]mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2  (also id/od for 3D)
# ip:     mb2ic1oc1          lrn: mb1ic96ih55iw55ls5beta0.75
# shapes: 2x16x7x7           matmul: 256x256:256x256   (dims may be '*' or '?' in runtime dims)
DIM_NAME = r"[a-z]+"
DIM_VALUE = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
dim_name = pp.Regex(DIM_NAME)
dim_value = pp.Regex(DIM_VALUE)
NAMED_DIM = DIM_NAME + DIM_VALUE
SHAPE_DIM = r"(?:\d+|\*|\?)"
TENSOR_SHAPE = SHAPE_DIM + r"(?:x" + SHAPE_DIM + r")*"
_NAMED_PAIR = re.compile(f"({DIM_NAME})({DIM_VALUE})")


def _named_pairs(text: str) -> list[tuple[str, str]]:
    """``mb2_ic16oc16...`` -> ``[("mb", "2"), ("ic", "16"), ("oc", "16"), ...]``"""
    return _NAMED_PAIR.findall(text)


def _tensor_shapes(text: str) -> list[list[str]]:
    """``256x256:256x1`` -> ``[["256", "256"], ["256", "1"]]``"""
    return [shape.split("x") for shape in text.split(":")]


#: ``mb2_ic16oc16_ih7oh7kh5...``: name/value pairs, ``_`` between groups
named_dims = pp.Regex(r"(?:" + NAMED_DIM + r"_?)+$")("named").add_parse_action(lambda t: [_named_pairs(t[0])])
#: ``2x16x7x7`` or, for matmul, ``256x256:256x256``
tensor_shapes = pp.Regex(TENSOR_SHAPE + r"(?::" + TENSOR_SHAPE + r")*$")("shapes").add_parse_action(
    lambda t: [_tensor_shapes(t[0])]
)
problem_descriptor = named_dims | tensor_shapes
#: the whole text as a problem descriptor (built once: pyparsing elements are costly to make)
_problem_whole = problem_descriptor + pp.StringEnd()


#: what pyparsing skips before an element (its default whitespace)
_WHITESPACE = pp.ParserElement.DEFAULT_WHITE_CHARS


def _problem_parts(text: str) -> tuple[str, list] | None:
    """``("named", pairs)`` or ``("shapes", shapes)`` as :data:`_problem_whole` reads
    ``text``, None when it does not.  Text without whitespace around it is matched by the
    two alternatives' compiled regexes directly, in their order (pyparsing's ``parse_string``
    was 10 of the 25 us a distinct shape took: a log with dynamic batch sizes has a distinct
    problem descriptor every few lines); other text goes through pyparsing, which skips
    that whitespace."""
    if text.strip(_WHITESPACE) == text:
        for element, parts in ((named_dims, _named_pairs), (tensor_shapes, _tensor_shapes)):
            if element.re.match(text):
                return element.resultsName, parts(text)
        return None
    try:
        res = _problem_whole.parse_string(text)
    except pp.ParseException:
        return None
    name = "named" if "named" in res else "shapes"
    return name, res[name]


@lru_cache(maxsize=4096)
def parse_problem(text: str) -> dict[str, str]:
    """Named dimensions of a problem descriptor; ``{}`` when it has another form."""
    parts = _problem_parts(text) if text else None
    if parts is None:
        return {}
    out: dict[str, str] = {}
    if parts[0] == "named":
        for name, value in parts[1]:
            key = name
            n = 2
            while key in out:  # repeated names (never in practice) keep every value
                key = f"{name}{n}"
                n += 1
            out[key] = value
    else:
        for i, shape in enumerate(parts[1]):
            out[f"t{i}"] = "x".join(shape)
    return out


# --------------------------------------------------------------------------- info lines
library_version = pp.Regex(
    r"(?P<name>(?:Intel\(R\) |Intel )?(?:MKL-DNN|DNNL|oneDNN)) (?P<version>v\d+(?:\.\d+)*\S*)"
)
template_header = pp.Regex(r"(?:prim_)?template:(?P<names>.*)")


# --------------------------------------------------------------------------- the shape record
#: the operation classes of primitive lines: fields in one of LAYOUTS, the problem
#: descriptor last
PRIMITIVE_CLASSES = ("exec", "create", "create_nested")
OP_CLASSES = {
    "exec": "exec",
    "create": "create",
    "create_nested": "create_nested",
}


@dataclass
class Shape:
    """Everything a distinct line shape says, as columns of the ``onednn_shapes`` table."""

    key: str
    marker: str = ""
    version_token: str = ""
    component: str = ""
    operation: str = ""
    op_class: str = "other"
    status: str = "ok"  # ok | truncated | malformed
    reason: str = ""
    tail_is_time: bool = False
    layout: str = ""
    engine: str = ""
    kind: str = ""
    impl: str = ""
    prop_kind: str = ""
    mds: str = ""
    attrs: str = ""
    aux: str = ""
    problem: str = ""
    alg: str = ""
    dtype: str = ""
    detail: str = ""
    info_kind: str = ""
    dims: dict[str, str] = dc_field(default_factory=dict)
    #: the memory descriptors as rows (a tuple made once per ``mds`` text, shared by its shapes)
    md_list: tuple[dict[str, str], ...] = ()


def op_class_of(operation: str, component: str) -> str:
    if component == "graph":
        base = operation.split(":", 1)[0]
        return {"exec": "graph_exec", "compile": "graph_compile", "info": "info"}.get(base, "graph_other")
    if operation in ("create:check", "exec:check"):
        return "check"
    if operation == "create:dispatch":
        return "dispatch"
    base = operation.split(":", 1)[0]
    if base in OP_CLASSES:
        return OP_CLASSES[base]
    if base in ("info", "error", "warn", "debuginfo"):
        return base
    return "other"


def _layout_for(marker_name: str, first_field: str) -> str:
    if not engine.re.match(first_field):
        return "v0.x"
    if marker_name == "mkldnn_verbose":
        return "v1.0"
    return "v1.1+"


def _fill_primitive(shape: Shape, layout: str, values: list[str]) -> None:
    names = LAYOUTS[layout]
    shape.layout = layout
    row = dict(zip(names, values))
    shape.engine = row.get("engine", "")
    shape.kind = row["kind"]
    shape.impl = row["impl"]
    shape.prop_kind = row["prop_kind"]
    shape.mds = row["mds"]
    shape.attrs = row.get("attrs", "")
    shape.aux = row["aux"]
    shape.problem = row["problem"]
    try:
        shape.md_list, shape.dtype = _md_rows(shape.mds)
    except pp.ParseException:
        shape.md_list, shape.dtype = (), ""
    try:
        aux = dict(parse_aux(shape.aux))
    except pp.ParseException:
        aux = {}
    shape.alg = aux.get("alg", "")
    shape.dims = parse_problem(shape.problem)


@lru_cache(maxsize=65536)
def _md_rows(text: str) -> tuple[tuple[dict[str, str], ...], str]:
    """The memory descriptors of ``text`` as :attr:`Shape.md_list` holds them (dicts shared
    by the shapes with this text, as their cached ``dims`` are), and the first defined data
    type among them: made once per text, not per shape."""
    mds = parse_mds(text)
    return (tuple(dict(md.__dict__) for md in mds),
            next((md.dt for md in mds if md.dt and md.dt != "undef"), ""))


def _leading(text: str) -> dict | pp.ParseException:
    """The named groups of ``leading_fields`` over the whole of ``text``.  Its compiled
    regex is matched directly: pyparsing's ``parse_string`` costs ~40 us a call, a tenth of a
    second for the few thousand shapes of a large log.  Text it does not match goes through
    pyparsing, for pyparsing's own error."""
    m = leading_fields.re.match(text)
    if m is None:
        try:
            return leading_fields.parse_string(text, parse_all=True)
        except pp.ParseException as exc:
            return exc
    return m.groupdict()


def parse_shape(text: str, whole: bool = False) -> Shape:
    """Parse one distinct shape.

    With ``whole=False``, ``text`` is a line without its timestamp and without its last comma
    field, and the result says in ``tail_is_time`` whether that cut-off field is the time of a
    complete profiling line.  When it is not (info lines, diagnostics, untimed or truncated
    lines), the caller parses the line again with ``whole=True``: ``text`` is then the whole
    line without its timestamp.

    A complete profiling line's problem descriptor is its key's last field, and nothing else
    of the shape depends on it: the rest is read once per key without that field (the first
    such shape is kept in :data:`_BEFORE_PROBLEM`), the descriptor once per text
    (:func:`parse_problem`).  A log whose batch size varies from call to call has keys that
    differ there only.
    """
    before, comma, _ = text.rpartition(",")
    if whole or not comma:
        return _parse_shape(text, whole)
    known = _BEFORE_PROBLEM.get(before)
    if known is None:
        shape = _parse_shape(text, whole)
        if key_before_problem(shape) is not None:
            if len(_BEFORE_PROBLEM) >= BEFORE_PROBLEM_KEPT:
                _BEFORE_PROBLEM.clear()
            _BEFORE_PROBLEM[before] = _copy(shape)  # (a caller may change the one it gets)
        return shape
    return with_problem(known, text)


def key_before_problem(shape: Shape) -> str | None:
    """The key of a complete profiling line's shape without its last field, the problem
    descriptor (what the shapes that differ from it only there share: :func:`with_problem`
    makes them from it); None for other shapes."""
    if not (shape.tail_is_time and shape.op_class in PRIMITIVE_CLASSES):
        return None
    before, comma, _ = shape.key.rpartition(",")
    return before if comma else None


def with_problem(shape: Shape, key: str) -> Shape:
    """The shape of ``key``, which differs from ``shape``'s key (one that
    :func:`key_before_problem` gives a key for) only after its last comma: ``shape`` with
    that key, its problem descriptor and dimensions."""
    problem = key.rpartition(",")[2]
    return _copy(shape, key=key, problem=problem, dims=parse_problem(problem))


def _copy(shape: Shape, **fields) -> Shape:
    """``shape`` with ``fields`` changed (a copy without Shape's __init__: ~0.5 us)."""
    out = object.__new__(Shape)
    out.__dict__.update(shape.__dict__, **fields)
    return out


#: complete profiling lines' shapes by their key without its last field (the problem
#: descriptor), at most BEFORE_PROBLEM_KEPT (then it starts again)
_BEFORE_PROBLEM: dict[str, Shape] = {}
BEFORE_PROBLEM_KEPT = 4096


def _parse_shape(text: str, whole: bool) -> Shape:
    """:func:`parse_shape`, every field of ``text`` read."""
    shape = Shape(key=text)
    lead = _leading(text)
    if isinstance(lead, pp.ParseException):  # pragma: no cover - the cut matched the marker
        shape.status, shape.reason = "malformed", f"not a verbose line: {lead.msg}"
        return shape
    shape.marker = lead["marker"]
    shape.version_token = lead.get("version") or ""
    shape.component = lead.get("component") or ""
    shape.operation = lead.get("operation") or ""
    rest = lead.get("rest") or ""
    component_name = shape.component or "primitive"
    shape.op_class = op_class_of(shape.operation, component_name)
    tail = None if not whole else ""
    if not shape.operation:
        if tail is None:
            return shape  # the whole line is in the tail: parse again with it
        shape.status, shape.reason = "truncated", "truncated: no operation field"
        return shape

    cls = shape.op_class
    if cls in PRIMITIVE_CLASSES:
        values = split_fields(rest)
        layout = _layout_for(shape.marker, values[0] if values else "")
        need = len(LAYOUTS[layout])
        have = len(values) + (1 if tail is None else 0)
        if tail is None:
            if have == need + 1:
                shape.tail_is_time = True
                _fill_primitive(shape, layout, values)
            return shape  # otherwise: parse again with the tail
        if have == need + 1:
            _fill_primitive(shape, layout, values[:-1])
            shape.status, shape.reason = "malformed", f"malformed: time field {values[-1]!r} is not a number"
        elif have == need:
            _fill_primitive(shape, layout, values)  # a complete line with no time: untimed
        else:
            shape.layout = layout
            shape.kind = values[LAYOUTS[layout].index("kind")] if len(values) > LAYOUTS[layout].index("kind") else ""
            state = "truncated" if have < need else "malformed"
            shape.status = state
            shape.reason = (
                f"{state}: {have} fields after the operation, layout {layout} needs {need} (+1 time)"
            )
        return shape

    if cls in ("graph_exec", "graph_compile"):
        # fields may hold {...} groups with commas: take engine, partition id and kind from
        # the left, backend (and implementation, when the template has one) from the right
        shape.detail = rest
        values = split_fields(rest)
        shape.engine = values[0] if values else ""
        shape.kind = values[2] if len(values) > 2 else ""
        if len(values) >= 3:
            shape.impl = values[-2] if tail is None else values[-3]
        shape.layout = "graph"
        if tail is None:
            shape.tail_is_time = True
        return shape
    if tail is None:
        return shape  # every other line kind is read whole
    if cls in ("check", "dispatch"):
        values = split_fields(rest)
        shape.kind = values[0] if values else ""
        shape.detail = rest
        if cls == "dispatch" and len(values) >= 2 and engine.re.match(values[1]):
            # the full descriptor is repeated: kind, engine, kind, impl, prop, mds, attrs, aux, problem
            desc = values[1:10]
            if len(desc) == 9:
                shape.engine, _, shape.impl, shape.prop_kind, shape.mds, shape.attrs, shape.aux, shape.problem = (
                    desc[0], desc[1], desc[2], desc[3], desc[4], desc[5], desc[6], desc[7]
                )
                shape.layout = "v1.1+"
        return shape
    if cls == "info":
        shape.detail = rest
        shape.info_kind = _info_kind(rest)
        return shape
    shape.detail = rest
    return shape


def _info_kind(text: str) -> str:
    if template_header.matches(text, parse_all=True) or text.startswith(("template:", "prim_template:")):
        return "template"
    if library_version.matches(text.split(",", 1)[0], parse_all=False):
        try:
            library_version.parse_string(text)
            return "version"
        except pp.ParseException:
            pass
    if text.startswith("Detected ISA is") or text.startswith("cpu,isa:"):
        return "isa"
    if text.startswith(("cpu,runtime:", "gpu,runtime:")):
        return "runtime"
    if text.startswith("gpu,engine"):
        return "gpu_engine"
    if text.startswith("graph,backend"):
        return "graph_backend"
    return "other"


def info_version(text: str) -> tuple[str, str] | None:
    """``("oneDNN v3.2.0", "<rest>")`` for a version info line, else None."""
    try:
        res = library_version.parse_string(text)
    except pp.ParseException:
        return None
    return f"{res['name']} {res['version']}", text


def info_isa(text: str) -> str | None:
    """The ISA text of an info line (``cpu,isa:...``, ``Detected ISA is ...`` or the v0.18
    form ``<version> (Git Hash ...),<isa>``)."""
    if text.startswith("cpu,isa:"):
        return text[len("cpu,isa:"):]
    if text.startswith("Detected ISA is "):
        return text[len("Detected ISA is "):]
    m = re.match(r".*\((?:Git Hash|commit) [^)]*\),(.+)$", text)
    if m:
        return m.group(1)
    return None
