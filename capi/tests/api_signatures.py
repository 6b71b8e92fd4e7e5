"""The C API's signatures as read from its three faces, in one vocabulary of argument kinds.

* header(text): clusterdyn.h -> {name: (result kind, [argument kinds])}, and its structs;
* fortran(text): clusterdyn.f90 -> the same, from the bind(C) interfaces (and the bind(C) types);
* ctypes(library_module): python/clusterdyn/_library.py -> the same, from the argtypes and restype
  that its _declare sets on a recording stand-in of the library.

A kind names what crosses the ABI: "int", "uint", "double", "size", "int*", "double*",
"size*", "char*", "char**", "handle" (an opaque cdyn_* pointer), "handle*" (a created handle),
"handle[]" (an array of handles), "void*", "struct NAME*", "void" (no result). Fortran and
ctypes cannot say some distinctions of C; match() accepts exactly these, and nothing else:
  - a Fortran integer(c_int) by value stands for an int or an unsigned int (no unsigned type);
  - ctypes c_void_p stands for a handle or a void*; POINTER(c_void_p) for handle* or handle[];
  - a Fortran type(c_ptr) by value stands for a handle or a void*; a type(c_ptr) by reference
    for a created handle or a returned name (char**).
Input pointers (const in C) must be intent(in) in Fortran, outputs intent(out) or intent(inout).
"""
import ctypes as C
import re

OPAQUE = re.compile(r"typedef struct (cdyn_\w+) \1;")


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _split_args(params):
    depth, cur, out = 0, "", []
    for ch in params:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [" ".join(a.split()) for a in out]


def c_kind(decl, opaque, structs):
    """Kind and const-ness of one C parameter declaration ("const double* q", "int n", ...)."""
    decl = decl.strip()
    if decl == "void":
        return None
    array = re.search(r"\[\s*\d*\s*\]$", decl)
    decl = re.sub(r"\s*\[\s*\d*\s*\]$", "", decl)
    raw = re.match(r"^(.*?)\w+$", decl).group(1)
    const = raw.strip().startswith("const")
    compact = re.sub(r"\s+", "", raw)
    stars = compact.count("*") + (1 if array else 0)
    t = re.sub(r"\s+", "", re.sub(r"\bconst\b", "", raw).replace("*", ""))
    if t in opaque:
        return ("handle[]" if "*const*" in compact else "handle" + "*" * (stars - 1)), const
    if t in structs:
        return f"struct {t}*", const
    scalar = {"int": "int", "unsignedint": "uint", "double": "double", "size_t": "size",
              "char": "char", "void": "void", "cdyn_status": "int"}[t]  # C enums are ints
    return scalar + "*" * stars, const


def header(text):
    """{name: (result, [(kind, const), ...])} of every CDYN_API function, and the structs'
    fields {struct: [(field, kind), ...]}."""
    text = _strip_comments(text)
    opaque = set(OPAQUE.findall(text))
    structs = {}
    for name, body in re.findall(r"typedef struct (cdyn_\w+) \{(.*?)\} \1;", text, re.S):
        structs[name] = [(f, {"int": "int", "double": "double"}[t])
                         for t, f in re.findall(r"(\w+)\s+(\w+);", body)]
    funcs = {}
    for ret, name, params in re.findall(r"CDYN_API\s+([\w\s\*]+?)\b(cdyn_\w+)\s*\((.*?)\);",
                                        text, re.S):
        ret = " ".join(ret.split())
        result = {"cdyn_status": "int", "int": "int", "const char*": "char*",
                  "const char *": "char*"}[ret]
        args = [c_kind(a, opaque, structs) for a in _split_args(params)]
        funcs[name] = (result, [a for a in args if a is not None])
    return funcs, structs


def _fortran_decl_kind(typ, attrs, dims):
    value = "value" in attrs
    intent = re.search(r"intent\((\w+)\)", attrs)
    intent = intent.group(1) if intent else None
    if typ == "type(c_ptr)":
        kind = "c_ptr[]" if dims else ("c_ptr" if value else "c_ptr&")
    elif typ == "real(c_double)":
        kind = "double" if value else "double*"
    elif typ == "integer(c_int)":
        kind = "int" if value else "int*"
    elif typ == "integer(c_size_t)":
        kind = "size" if value else "size*"
    elif typ == "character(kind=c_char)":
        kind = "char*"
    else:
        m = re.match(r"type\((cdyn_\w+)\)$", typ)
        kind = f"struct {m.group(1)}*" if m else "?" + typ
    return kind, intent


def fortran(text):
    """{name: (result, [(kind, intent), ...])} from the bind(C) interfaces, and the bind(C)
    types' fields {type: [(field, kind), ...]}."""
    text = re.sub(r"&\s*\n\s*", " ", text)  # join continuation lines
    text = re.sub(r"!.*", "", text)
    types = {}
    for name, body in re.findall(r"type, bind\(C\), public :: (\w+)\n(.*?)end type", text, re.S):
        types[name] = [(f, {"real(c_double)": "double", "integer(c_int)": "int"}[t])
                       for t, f in re.findall(r"(real\(c_double\)|integer\(c_int\)) :: (\w+)",
                                              body)]
    funcs = {}
    pattern = (r"(integer\(c_int\) function|type\(c_ptr\) function|subroutine)\s+(\w+)\s*"
               r"\(([^)]*)\)\s*bind\(C, name=\"(\w+)\"\)(.*?)end (?:function|subroutine)")
    for head, _, dummies, cname, body in re.findall(pattern, text, re.S):
        result = {"integer(c_int) function": "int", "type(c_ptr) function": "char*",
                  "subroutine": "void"}[head]
        decl = {}
        for line in body.splitlines():
            m = re.match(r"\s*(type\(\w+\)|real\(c_double\)|integer\(c_\w+\)|"
                         r"character\(kind=c_char\))((?:,\s*[\w()]+)*)\s*::\s*(.*)", line)
            if not m:
                continue
            for var in re.findall(r"(\w+)(\([^)]*\))?", m.group(3)):
                decl[var[0].lower()] = _fortran_decl_kind(m.group(1), m.group(2), var[1])
        names = [d.strip().lower() for d in dummies.split(",") if d.strip()]
        funcs[cname] = (result, [decl.get(n, ("undeclared " + n, None)) for n in names])
    return funcs, types


class _Recorder:
    """Stands in for the CDLL: every attribute is a function that records its signature."""

    def __init__(self):
        self.functions = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.functions.setdefault(name, type("Fn", (), {"argtypes": None,
                                                               "restype": C.c_int})())


def _ctypes_kind(t, structs_by_class):
    if t is None:
        return "void"
    simple = {C.c_int: "int", C.c_uint: "uint", C.c_double: "double", C.c_size_t: "size",
              C.c_char_p: "char*", C.c_void_p: "c_void_p"}
    if t in simple:
        return simple[t]
    if hasattr(t, "_type_") and issubclass(t, C._Pointer):
        inner = t._type_
        if inner in structs_by_class:
            return f"struct {structs_by_class[inner]}*"
        return {C.c_int: "int*", C.c_double: "double*", C.c_size_t: "size*",
                C.c_char_p: "char**", C.c_void_p: "c_void_p*"}.get(inner, f"?{t}")
    return f"?{t}"


def ctypes(library_module, struct_names):
    """{name: (result, [kind, ...])} as _library._declare declares them; and the ctypes
    Structures' fields {struct: [(field, kind), ...]}. struct_names maps a Structure class name
    to the C struct (ProximalSettings -> cdyn_proximal_settings)."""
    rec = _Recorder()
    library_module._declare(rec)
    classes = {getattr(library_module, cls): c for cls, c in struct_names.items()}
    funcs = {name: (_ctypes_kind(fn.restype, classes),
                    [_ctypes_kind(a, classes) for a in (fn.argtypes or [])])
             for name, fn in rec.functions.items()}
    fields = {c: [(f, _ctypes_kind(t, classes)) for f, t in cls._fields_]
              for cls, c in classes.items()}
    return funcs, fields


def match_fortran(c_arg, f_arg):
    """Whether a Fortran dummy (kind, intent) binds the C parameter (kind, const): an error
    text, or None."""
    (ck, const), (fk, intent) = c_arg, f_arg
    accepted = {"handle": {"c_ptr"}, "void*": {"c_ptr"}, "handle*": {"c_ptr&"},
                "char**": {"c_ptr&"}, "handle[]": {"c_ptr[]"}, "uint": {"int"}}
    if fk != ck and fk not in accepted.get(ck, ()):
        return f"C {ck}, Fortran {fk}"
    if ck.endswith("*") and ck not in ("handle*", "void*") and fk.endswith("*"):
        if const and intent != "in":
            return f"C const {ck} (an input), Fortran intent({intent})"
        if not const and intent == "in":
            return f"C {ck} (an output), Fortran intent(in)"
    return None


def match_ctypes(c_arg, p_kind):
    """Whether a ctypes argtype binds the C parameter (kind, const): an error text, or None."""
    c_kind_ = c_arg[0]
    accepted = {"handle": {"c_void_p"}, "void*": {"c_void_p"}, "handle*": {"c_void_p*"},
                "handle[]": {"c_void_p*"}}
    if p_kind != c_kind_ and p_kind not in accepted.get(c_kind_, ()):
        return f"C {c_kind_}, ctypes {p_kind}"
    return None


# ---- argument descriptions (capi/capi_args.hpp) against the parameter names and optional-ness ---

def descriptions(text):
    """{C function: [(argument name, optional), ...]} from capi_args.hpp: every ArgSpec array is
    preceded by a /// comment naming the functions it describes (cdyn_* identifiers)."""
    out = {}
    pattern = r"((?:///[^\n]*\n)+)inline constexpr ArgSpec (k\w+)\[\] = \{(.*?)\};"
    for comment, _, body in re.findall(pattern, text, re.S):
        args = [(name, opt == "kOpt") for name, opt in
                re.findall(r'\{"(\w+)",\s*Len::\w+,\s*[\w:]+,\s*(kOpt|kReq)\}', body)]
        for fn in re.findall(r"\bcdyn_\w+", comment):
            out[fn] = args
    return out


def header_names(text):
    """{name: [parameter names]} of every CDYN_API function."""
    text = _strip_comments(text)
    return {name: [re.sub(r"\s*\[\s*\d*\s*\]$", "", a).split()[-1].lstrip("*")
                   for a in _split_args(params) if a.strip() != "void"]
            for _, name, params in re.findall(r"CDYN_API\s+([\w\s\*]+?)\b(cdyn_\w+)\s*\((.*?)\);",
                                              text, re.S)}


def fortran_optional(text):
    """{C name: {dummy (lower case): optional}} from the bind(C) interfaces."""
    text = re.sub(r"&\s*\n\s*", " ", text)
    text = re.sub(r"!.*", "", text)
    out = {}
    pattern = (r"(?:integer\(c_int\) function|type\(c_ptr\) function|subroutine)\s+\w+\s*"
               r"\([^)]*\)\s*bind\(C, name=\"(\w+)\"\)(.*?)end (?:function|subroutine)")
    for cname, body in re.findall(pattern, text, re.S):
        dummies = {}
        for line in body.splitlines():
            m = re.match(r"\s*[\w()=]+((?:,\s*[\w()]+)*)\s*::\s*(.*)", line)
            if m:
                for var in re.findall(r"(\w+)(?:\([^)]*\))?", m.group(2)):
                    dummies[var.lower()] = "optional" in m.group(1)
        out[cname] = dummies
    return out
