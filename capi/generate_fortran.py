"""Writes the Fortran module clusterdyn.f90 from the C header clusterdyn.h (run by CMake at build
time; Python 3, standard library only).

Usage: generate_fortran.py HEADER OUTPUT

Everything in the module is derived from the header: the CDYN_ constants (#define and enum
values), the bind(C) types (the header's structs of int and double fields) and one bind(C)
interface per CDYN_API function, with the C parameter names and order. A C parameter maps to a
Fortran dummy by its type:

  int, unsigned int, C enum       integer(c_int), value
  size_t / double                 integer(c_size_t), value / real(c_double), value
  cdyn_x* (any opaque handle)     type(c_ptr), value
  cdyn_x** (a created handle)     type(c_ptr), intent(out)
  cdyn_x* const* (handle array)   type(c_ptr), intent(in) :: x(*)
  void*                           type(c_ptr), value
  const char* / char* (buffer)    character(kind=c_char), intent(in) / intent(inout) :: s(*)
  const char** (returned name)    type(c_ptr), intent(out)
  const double* / double*         real(c_double), intent(in) / intent(inout) :: x(*)
  double x[N]                     real(c_double), intent(in or inout) :: x(N)
  int* / size_t*                  integer(c_int) / integer(c_size_t), intent(out) (one value)
  const cdyn_s* / cdyn_s*         type(cdyn_s), intent(in) / intent(out) (one struct)

Output arrays are intent(inout): a matrix's rows beyond its row count (ld > rows) are left
untouched, and some outputs are read first (warm starts). What C cannot say is written in the
header as a comment right after the parameter name, which C compilers and the other parsers
ignore:
  /*optional*/   the pointer may be NULL: an OPTIONAL dummy (an omitted argument passes NULL);
  /*array*/      an int*, size_t* or struct pointer that is an array, not one value;
  /*scalar*/     a double* that is one value, not an array;
combined as /*optional array*/, /*optional scalar*/. Two parameters whose names differ only in
case (G and g) become gmat and gvec (Fortran is case-insensitive).
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import c_header  # noqa: E402
from c_header import HeaderError  # noqa: E402

PREAMBLE = """\
! clusterdyn C API for Fortran 2018 (ISO_C_BINDING). GENERATED from clusterdyn.h by
! capi/generate_fortran.py at build time: do not edit, change the header. Every function of
! clusterdyn.h has a bind(C) interface here with the same name, argument names and order; see
! clusterdyn.h for the full documentation (units, frames, layouts, ownership, thread safety).
!
! Mapping of the C types:
!   cdyn_model*, cdyn_workspace*, ...   type(c_ptr), value        (handles)
!   cdyn_model**, cdyn_workspace**      type(c_ptr), intent(out)  (created handles)
!   int / unsigned int / C enums        integer(c_int)
!   size_t                              integer(c_size_t)
!   const char* (input string)          character(kind=c_char) :: s(*); pass trim(s)//c_null_char
!   const char** (returned name)        type(c_ptr), intent(out); convert with c_f_pointer and
!                                       stop at c_null_char (names live as long as the model)
!   double arrays                       real(c_double) :: x(*); matrices column-major, so a
!                                       Fortran array M(ldm, nv) is passed as M with ldm
!   optional pointers (NULL in C)       OPTIONAL dummy arguments: omit the argument and pass 0
!                                       as its length (the header says which are optional)
!   char* text buffer                   character(kind=c_char) :: buf(*) with len = size(buf)
!   C structs                           type(cdyn_...), bind(C) of the same fields
! Parameters whose names differ only in case (G and g) are gmat and gvec here.
! Indices are 0-based as in C. The module holds interfaces and constants only: programs link
! with -lclusterdyn and need no object file of this module.
"""

SCALARS = {"int": ("integer(c_int)", "c_int"), "unsigned int": ("integer(c_int)", "c_int"),
           "double": ("real(c_double)", "c_double"), "size_t": ("integer(c_size_t)", "c_size_t"),
           "char": ("character(kind=c_char)", "c_char")}


def dummy(p, opaque, struct_names):
    """(name, Fortran declaration without the name's dimension, dimension, imports) of one
    c_header.Param."""
    name, base, stars, const, fixed, marks = p.name, p.base, p.stars, p.const, p.fixed, p.marks
    optional = ", optional" if "optional" in marks else ""
    if base in opaque or (base == "void" and stars == "*"):
        if stars == "*":
            return name, "type(c_ptr), value" + optional, "", {"c_ptr"}
        if stars == "**":
            return name, "type(c_ptr), intent(out)" + optional, "", {"c_ptr"}
        if stars == "*const*":
            return name, "type(c_ptr), intent(in)" + optional, "(*)", {"c_ptr"}
    elif base in struct_names and stars == "*":
        array = "array" in marks
        intent = "in" if const else ("inout" if array else "out")
        return name, f"type({base}), intent({intent}){optional}", "(*)" if array else "", {base}
    elif base == "char" and stars == "**":
        return name, "type(c_ptr), intent(out)" + optional, "", {"c_ptr"}
    elif base in SCALARS and stars == "" and fixed is None:
        if marks - {"optional"} or optional:
            raise HeaderError(f"'{p.decl}': markers on a value parameter")
        ftype, kind = SCALARS[base]
        return name, f"{ftype}, value", "", {kind}
    elif base in SCALARS and (stars == "*") != (fixed is not None):
        ftype, kind = SCALARS[base]
        array = fixed is not None or base == "char" or (
            "array" in marks if base in ("int", "size_t") else "scalar" not in marks)
        intent = "in" if const else ("inout" if array else "out")
        dim = f"({fixed})" if fixed is not None else ("(*)" if array else "")
        return name, f"{ftype}, intent({intent}){optional}", dim, {kind}
    raise HeaderError(f"no Fortran mapping for the parameter '{p.decl}'")


def wrap(words, indent, width=100):
    """The words joined by spaces into continuation lines (&) no longer than width."""
    lines, cur = [], " " * indent + words[0]
    for w in words[1:]:
        if len(cur) + 1 + len(w) + 2 > width:
            lines.append(cur + " &")
            cur = " " * (indent + 4) + w
        else:
            cur += " " + w
    return "\n".join(lines + [cur])


def interface(result, name, params, opaque, struct_names):
    args = [dummy(p, opaque, struct_names) for p in params]
    lower = [a[0].lower() for a in args]
    names = []
    for (n, *_), low in zip(args, lower):
        if lower.count(low) > 1:  # G and g: Fortran names are case-insensitive
            n = low + ("mat" if n.isupper() else "vec")
        names.append(n)
    kind = {"cdyn_status": "integer(c_int) function", "int": "integer(c_int) function",
            "const char*": "type(c_ptr) function", "void": "subroutine"}.get(result)
    if kind is None:
        raise HeaderError(f"{name}: no Fortran mapping for the result '{result}'")
    imports = set().union(*(a[3] for a in args)) if args else set()
    imports |= {"integer(c_int) function": {"c_int"}, "type(c_ptr) function": {"c_ptr"},
                "subroutine": set()}[kind]
    order = ["c_int", "c_char", "c_double", "c_ptr", "c_size_t"]
    imports = [i for i in order if i in imports] + sorted(imports - set(order))
    words = [w + "," for w in names[:-1]] + names[-1:]
    words = [f"{kind} {name}(" + (words[0] if words else "")] + words[1:]
    words[-1] += ")"
    lines = [wrap(words + [f"bind(C, name=\"{name}\")"], 4)]
    if imports:
        lines.append(f"      import :: {', '.join(imports)}")
    for n, (_, decl, dim, _) in zip(names, args):
        lines.append(f"      {decl} :: {n}{dim}")
    lines.append("    end " + ("subroutine" if kind == "subroutine" else "function"))
    return "\n".join(lines)


def generate(header_text):
    """The text of the Fortran module of the header text."""
    header = c_header.read(header_text)
    out = [PREAMBLE, "module clusterdyn",
           "  use, intrinsic :: iso_c_binding, only: c_int, c_double, c_size_t, c_char, c_ptr",
           "  implicit none", "  private :: c_int, c_double, c_size_t, c_char, c_ptr", ""]
    for name, value, enum in header.constants:
        if enum:
            out += ["", f"  ! {enum}"]
        out.append(f"  integer(c_int), parameter, public :: {name} = {value}")
    for name, fields in header.structs.items():
        out += ["", f"  type, bind(C), public :: {name}"]
        out += [f"    {SCALARS[t][0]} :: {f}" for t, f in fields]
        out.append("  end type")
    out += ["", "  interface"]
    for fn in header.functions:
        if fn.section:  # the banner of the section this function opens
            out += ["", f"    ! ---- {fn.section} " + "-" * max(0, 88 - len(fn.section))]
        out += ["", interface(fn.result, fn.name, fn.params, header.opaque, set(header.structs))]
    out += ["", "  end interface", "end module clusterdyn", ""]
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[1], encoding="utf-8") as f:
        header = f.read()
    try:
        module = generate(header)
    except HeaderError as e:
        sys.exit(f"{sys.argv[1]}: {e}")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(module)
