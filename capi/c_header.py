"""Reads the C header clusterdyn.h for the binding generators (generate_fortran.py,
generate_ctypes.py; Python 3, standard library only): one parser, so that the Fortran module and
the ctypes signatures say what the header says and nothing else.

read(header_text) gives a Header:
  constants   [(name, value, enum)]: the #define CDYN_ numbers and the enum members in header
              order (enum: the enum's name on its first member, else None);
  structs     {name: [(C type, field)]}: the header's structs (int and double fields only);
  opaque      the opaque handle types (typedef struct cdyn_x cdyn_x;);
  enums       the enum type names;
  functions   [Function]: every CDYN_API declaration in header order, with the banner of the
              section it opens (None for the others) and its parameters read into Params.

A Param says what crosses the ABI: name, base type (C enums and cdyn_status read as int), the
pointer stars ("", "*", "**", "*const*"), const (an input), fixed (N of `double x[N]`, else
None) and the markers of the comment right after the name, which C does not say:
  /*optional*/   the pointer may be NULL;
  /*array*/      an int*, size_t* or struct pointer that is an array, not one value;
  /*scalar*/     a double* that is one value, not an array;
combined as /*optional array*/, /*optional scalar*/.
"""
import collections
import re

MARKS = {"optional", "array", "scalar"}
Param = collections.namedtuple("Param", "name base stars const fixed marks decl")
Function = collections.namedtuple("Function", "section result name params")
Header = collections.namedtuple("Header", "constants structs opaque enums functions")


class HeaderError(Exception):
    pass


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_top(params):
    """The comma-separated parts of a parameter list (no nested parentheses in the header's)."""
    return [" ".join(p.split()) for p in params.split(",") if p.strip()]


def constants(text):
    """[(name, value, enum)] of the #define CDYN_ numbers and the enum members, in header
    order (text without comments)."""
    values, out = {}, []
    pattern = (r"#define (CDYN_\w+)[ \t]+(?:\\\n)?[ \t]*([^\n]*)|"
               r"typedef enum (\w+) \{(.*?)\} \3;")
    for m in re.finditer(pattern, text, re.S):
        if m.group(1):
            name, expr = m.group(1), m.group(2).strip()
            if name == "CDYN_API":
                continue
            expr = re.sub(r"\b(\d+)u\b", r"\1", expr)
            expr = re.sub(r"\bCDYN_\w+\b", lambda c: str(values[c.group(0)]), expr)
            if not re.fullmatch(r"[\d\s()+*-]+", expr):
                raise HeaderError(f"#define {name}: not an integer expression: {expr}")
            values[name] = eval(expr)  # digits, + - * and parentheses only (checked above)
            out.append((name, values[name], None))
        else:
            for k, member in enumerate(split_top(m.group(4))):
                mm = re.fullmatch(r"(CDYN_\w+) = (\d+)", member)
                if not mm:
                    raise HeaderError(f"enum {m.group(3)}: give {member} an explicit value")
                values[mm.group(1)] = int(mm.group(2))
                out.append((mm.group(1), int(mm.group(2)), m.group(3) if k == 0 else None))
    return out


def structs(text):
    """{name: [(C type, field)]} of the header's structs, in header order (text without
    comments)."""
    out = {}
    for name, body in re.findall(r"typedef struct (cdyn_\w+) \{(.*?)\} \1;", text, re.S):
        fields = re.findall(r"(\w+)\s+(\w+);", body)
        for t, f in fields:
            if t not in ("int", "double"):
                raise HeaderError(f"struct {name}: field {f} of type {t} (int or double only)")
        out[name] = fields
    return out


def param(decl, enums):
    """The Param of one C parameter declaration with its marker comment."""
    marks = set()
    for comment in re.findall(r"/\*(.*?)\*/", decl):
        words = set(comment.split())
        if not words <= MARKS:
            raise HeaderError(f"unknown marker /*{comment}*/ in '{decl}'")
        marks |= words
    decl = " ".join(re.sub(r"/\*.*?\*/", " ", decl).split())
    fixed = re.search(r"\[\s*(\d+)\s*\]$", decl)
    bare = re.sub(r"\s*\[\s*\d*\s*\]$", "", decl)
    m = re.match(r"^(const\s+)?([\w ]+?)\s*((?:\*\s*(?:const\s*)?)*)(\w+)$", bare)
    if not m:
        raise HeaderError(f"cannot read the parameter '{bare}'")
    base = m.group(2)
    base = "int" if base == "cdyn_status" or base in enums else base
    return Param(m.group(4), base, m.group(3).replace(" ", ""), bool(m.group(1)),
                 int(fixed.group(1)) if fixed else None, frozenset(marks), bare)


def read(header_text):
    """The Header of the header text."""
    text = strip_comments(header_text)
    enums = set(re.findall(r"typedef enum (\w+) \{", text))
    header = Header(constants(text), structs(text),
                    set(re.findall(r"typedef struct (cdyn_\w+) \1;", text)), enums, [])
    # Section banners of the header (a comment line between two /* ==== */ lines).
    banner = re.compile(r"/\* =+ \*/\n/\*\s*(.*?)\s*\*/\n(?:/\*[^\n]*\*/\n)*?/\* =+ \*/")
    events = [(m.start(), "section", m.group(1)) for m in banner.finditer(header_text)]
    decl = re.compile(r"CDYN_API\s+([\w\s\*]+?)\s*\b(cdyn_\w+)\s*\((.*?)\);", re.S)
    # The declarations with their marker comments (lower-case words only, checked by param):
    # the header without its other comments, positions kept.
    kept = re.sub(r"/\*(?![a-z ]+\*/).*?\*/", lambda c: " " * len(
        c.group(0)) if "\n" not in c.group(0) else re.sub(r"[^\n]", " ", c.group(0)),
        header_text, flags=re.S)
    kept = re.sub(r"//[^\n]*", "", kept)
    events += [(m.start(), "function", m) for m in decl.finditer(kept)]
    seen, section = set(), None
    for _, what, item in sorted(events, key=lambda e: e[0]):
        if what == "section":
            section = item
            continue
        result, name, params = " ".join(item.group(1).split()), item.group(2), item.group(3)
        if name in seen:
            raise HeaderError(f"{name} declared twice")
        seen.add(name)
        params = [] if split_top(params) in ([], ["void"]) else split_top(params)
        header.functions.append(Function(section, result, name,
                                         [param(p, enums) for p in params]))
        section = None
    return header
