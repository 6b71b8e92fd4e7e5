"""Writes the ctypes signatures of the C API, python/clusterdyn/_signatures.py, from the C header
clusterdyn.h (Python 3, standard library only; the same reading of the header as the Fortran
module's, c_header.py). The file is checked in, so that the package imports without the header
or a build step; capi_api_consistency (check_api.py) and the format stage of tools/test.sh
(--check) fail when it differs from what this script writes.

Usage: generate_ctypes.py [--check] [HEADER OUTPUT]
  (default: capi/clusterdyn.h and python/clusterdyn/_signatures.py of this checkout)
  --check   write nothing; exit 1 naming the difference when OUTPUT is not up to date.

A C parameter maps to a ctypes type by what crosses the ABI (the markers /*optional*/ ... of the
header change nothing here: a NULL is None, an array and a single value are both pointers):

  int, C enum / unsigned int      c_int / c_uint
  double / size_t                 c_double / c_size_t
  cdyn_x* (opaque handle), void*  c_void_p
  cdyn_x** / cdyn_x* const*       POINTER(c_void_p) (a created handle / an array of handles)
  const char* / char* (buffer)    c_char_p
  const char** (returned name)    POINTER(c_char_p)
  double* / double x[N]           POINTER(c_double)
  int* / size_t*                  POINTER(c_int) / POINTER(c_size_t)
  cdyn_s* (a struct)              POINTER(S), S the ctypes Structure of cdyn_s
and a result cdyn_status / int to c_int, const char* to c_char_p, void to None. The structs are
ctypes Structures named in CamelCase without the prefix (cdyn_proximal_settings ->
ProximalSettings).
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import c_header  # noqa: E402
from c_header import HeaderError  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_HEADER = ROOT / "capi" / "clusterdyn.h"
DEFAULT_OUTPUT = ROOT / "python" / "clusterdyn" / "_signatures.py"

PREAMBLE = '''\
"""ctypes signatures of the clusterdyn C API: the structs of clusterdyn.h as Structures, and
SIGNATURES, {function: (restype, [argtypes])} of every function of clusterdyn.h in header order.
GENERATED from capi/clusterdyn.h by capi/generate_ctypes.py: do not edit, change the header and
run `python3 capi/generate_ctypes.py` (docs/design/c-layer.md, "How to add a C function").
_library.py declares them on the loaded library."""
import ctypes as C
'''

# The names of the ctypes types in the generated file: (name, type, the C types it stands for).
ALIASES = [("_int", "C.c_int", "int, a C enum"), ("_uint", "C.c_uint", "unsigned int"),
           ("_double", "C.c_double", "double"), ("_size", "C.c_size_t", "size_t"),
           ("_H", "C.c_void_p", "an opaque handle (cdyn_model*, ...) or a void*"),
           ("_HP", "C.POINTER(C.c_void_p)", "a created handle (cdyn_x**), an array of handles"),
           ("_str", "C.c_char_p", "a string (const char*) or a text buffer (char*)"),
           ("_S", "C.POINTER(C.c_char_p)", "a returned name (const char**)"),
           ("_D", "C.POINTER(C.c_double)", "double*, double x[N]"),
           ("_I", "C.POINTER(C.c_int)", "int*"), ("_Z", "C.POINTER(C.c_size_t)", "size_t*")]
VALUES = {"int": "_int", "unsigned int": "_uint", "double": "_double", "size_t": "_size"}
POINTERS = {"double": "_D", "int": "_I", "size_t": "_Z"}
FIELDS = {"int": "C.c_int", "double": "C.c_double"}


def class_name(struct):
    """cdyn_proximal_settings -> ProximalSettings."""
    return "".join(w.capitalize() for w in struct[len("cdyn_"):].split("_"))


def argtype(p, opaque, structs):
    """The ctypes type (a name of the generated file) of one c_header.Param."""
    if p.base in opaque or (p.base == "void" and p.stars == "*"):
        if p.stars == "*":
            return "_H"
        if p.stars in ("**", "*const*"):
            return "_HP"
    elif p.base in structs and p.stars == "*":
        return f"C.POINTER({class_name(p.base)})"
    elif p.base == "char":
        if p.stars == "*" and p.fixed is None:
            return "_str"
        if p.stars == "**":
            return "_S"
    elif p.base in VALUES and p.stars == "" and p.fixed is None:
        return VALUES[p.base]
    elif p.base in POINTERS and (p.stars == "*") != (p.fixed is not None):
        return POINTERS[p.base]
    raise HeaderError(f"no ctypes mapping for the parameter '{p.decl}'")


def restype(fn):
    result = {"cdyn_status": "_int", "int": "_int", "const char*": "_str",
              "void": "None"}.get(fn.result)
    if result is None:
        raise HeaderError(f"{fn.name}: no ctypes mapping for the result '{fn.result}'")
    return result


def wrap(head, items, tail, indent, width=100):
    """head + items joined by ", " + tail, broken after a comma into lines of at most width
    characters, continuation lines aligned under the first item."""
    lines, cur = [], " " * indent + head
    for k, item in enumerate(items):
        piece = item + ("," if k + 1 < len(items) else tail)
        if len(cur) + 1 + len(piece) > width and not cur.endswith(head):
            lines.append(cur)
            cur = " " * (indent + len(head)) + piece
        else:
            cur += ("" if cur.endswith(head) else " ") + piece
    if not items:
        cur += tail
    return "\n".join(lines + [cur])


def generate(header_text):
    """The text of _signatures.py of the header text."""
    header = c_header.read(header_text)
    out = [PREAMBLE] + [f"{name} = {t}  # {what}" for name, t, what in ALIASES]
    for struct, fields in header.structs.items():
        out += ["", "", f"class {class_name(struct)}(C.Structure):",
                f'    """{struct} (clusterdyn.h)."""',
                wrap("_fields_ = [", [f'("{f}", {FIELDS[t]})' for t, f in fields], "]", 4)]
    out += ["", "", "SIGNATURES = {"]
    for fn in header.functions:
        if fn.section:
            out.append(f"    # ---- {fn.section} " + "-" * max(0, 88 - len(fn.section)))
        args = [argtype(p, header.opaque, header.structs) for p in fn.params]
        out.append(wrap(f'"{fn.name}": ({restype(fn)}, [', args, "]),", 4))
    out += ["}", ""]
    return "\n".join(out)


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    if len(paths) not in (0, 2):
        sys.exit(__doc__.split("\n\n")[1])
    header_path, output = map(pathlib.Path, paths) if paths else (DEFAULT_HEADER, DEFAULT_OUTPUT)
    try:
        text = generate(header_path.read_text(encoding="utf-8"))
    except HeaderError as e:
        sys.exit(f"{header_path}: {e}")
    if check:
        current = output.read_text(encoding="utf-8") if output.is_file() else None
        if current != text:
            sys.exit(f"{output} is not what capi/generate_ctypes.py writes from {header_path}: "
                     "run `python3 capi/generate_ctypes.py` and commit the result")
        return
    output.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
