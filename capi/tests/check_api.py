"""Consistency of the C API's faces (run by ctest as capi_api_consistency).

* every function declared in clusterdyn.h is exported by the library and vice versa;
* clusterdyn.f90 (as capi/generate_fortran.py generates it from the header; an independent reading
  of both here) has a bind(C) interface for exactly the header's functions, each with the
  header's number of arguments, and the same value for every CDYN_ constant;
* the argument and result TYPES agree: clusterdyn.f90's interfaces and bind(C) types, and the
  ctypes argtypes/restype and Structures that python/clusterdyn/_library.py declares, with the
  header's (api_signatures.py: one vocabulary of kinds; inputs intent(in) in Fortran);
* _library.py declares exactly the header's functions, every exported one among them, and its
  table python/clusterdyn/_signatures.py is what capi/generate_ctypes.py writes from the header
  (checked in; regenerate with `python3 capi/generate_ctypes.py`);
* the argument descriptions of capi/capi_args.hpp name parameters of the header's functions, and
  the Fortran dummies of those arrays are `optional` exactly when the description says kOpt;
* docs/c-api.md names every function and contains the example programs verbatim (each
  fenced block preceded by "<!-- file: PATH -->" must equal the file PATH).

Usage: check_api.py SOURCE_DIR LIBRARY NM
"""
import importlib
import pathlib
import re
import subprocess
import sys
import types

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import api_signatures  # noqa: E402

src, lib, nm = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
header = (src / "capi/clusterdyn.h").read_text()
sys.path.insert(0, str(src / "capi"))
import generate_ctypes  # noqa: E402
import generate_fortran  # noqa: E402
fortran = generate_fortran.generate(header)  # the module the build generates from the header
doc = (src / "docs/c-api.md").read_text()
errors = []

functions = set(re.findall(r"CDYN_API\s+[\w\s\*]+?\b(cdyn_\w+)\s*\(", header))
if len(functions) < 40:
    errors.append(f"only {len(functions)} functions found in the header")

out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                     text=True).stdout
exported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
for name in sorted(functions - exported):
    errors.append(f"declared but not exported: {name}")
for name in sorted(exported - functions):
    errors.append(f"exported but not declared in clusterdyn.h: {name}")

bound = re.findall(r'bind\(C,\s*name="(cdyn_\w+)"\)', fortran)
if len(bound) != len(set(bound)):
    errors.append("clusterdyn.f90 binds a function twice")
for name in sorted(functions - set(bound)):
    errors.append(f"no Fortran interface: {name}")
for name in sorted(set(bound) - functions):
    errors.append(f"Fortran interface of an unknown function: {name}")

def arguments(text, start):
    """Number of top-level arguments of the parenthesised list that opens at text[start]."""
    depth, count, seen = 0, 0, False
    for ch in text[start:]:
        if ch == "(":
            depth += 1
            continue
        if ch == ")":
            depth -= 1
            if depth == 0:
                return count + 1 if seen else 0
            continue
        if depth == 1 and ch == ",":
            count += 1
        elif depth >= 1 and not ch.isspace() and ch != "&":
            seen = True
    return -1


for name in sorted(functions & set(bound)):
    c = re.search(rf"CDYN_API\s+[\w\s\*]+?\b{name}\s*(\()", header)
    f = re.search(rf"(?:function|subroutine)\s+{name}\s*(\()", fortran)
    nc = arguments(header, c.start(1)) if c else -1
    if nc == 1 and re.match(r"\(\s*void\s*\)", header[c.start(1):]):
        nc = 0
    nf = arguments(fortran, f.start(1)) if f else -1
    if nc != nf:
        errors.append(f"{name}: {nc} arguments in clusterdyn.h, {nf} in clusterdyn.f90")

constants = {k: int(v) for k, v in re.findall(r"#define (CDYN_\w+) (\d+)u?\b", header)}
constants.update({k: int(v) for k, v in re.findall(r"\b(CDYN_\w+) = (\d+)", header)})
constants["CDYN_VERSION_NUMBER"] = (constants["CDYN_VERSION_MAJOR"] * 10000 +
                                    constants["CDYN_VERSION_MINOR"] * 100 +
                                    constants["CDYN_VERSION_PATCH"])
fvalues = {k.upper(): int(v) for k, v in
           re.findall(r"parameter, public :: (CDYN_\w+) = (\d+)", fortran)}
for k, v in sorted(constants.items()):
    if fvalues.get(k) != v:
        errors.append(f"{k} = {v} in the header, {fvalues.get(k)} in clusterdyn.f90")
for k in sorted(set(fvalues) - set(constants)):
    errors.append(f"{k} in clusterdyn.f90 is not in the header")

# ---- types: header <-> Fortran <-> ctypes -------------------------------------------------------
c_sigs, c_structs = api_signatures.header(header)
if set(c_sigs) != functions:
    errors.append("api_signatures.header reads other functions than the name scan: "
                  f"{sorted(set(c_sigs) ^ functions)}")


def compare(face, sigs, structs, match):
    """Every function and struct of the header against one face (its signatures and structs)."""
    for name in sorted(functions - set(sigs)):
        errors.append(f"{face}: no signature of {name}")
    for name in sorted(set(sigs) - functions):
        errors.append(f"{face}: a signature of an unknown function {name}")
    for name in sorted(set(c_sigs) & set(sigs)):
        (cr, cargs), (r, args) = c_sigs[name], sigs[name]
        if cr != r:
            errors.append(f"{name}: result {cr} in clusterdyn.h, {r} in {face}")
        if len(cargs) != len(args):
            errors.append(f"{name}: {len(cargs)} arguments in clusterdyn.h, {len(args)} in {face}")
        for k, (ca, a) in enumerate(zip(cargs, args)):
            why = match(ca, a)
            if why:
                errors.append(f"{name}: argument {k + 1}: {why} ({face})")
    for struct, fields in sorted(c_structs.items()):
        if structs.get(struct) != fields:
            errors.append(f"{struct}: fields {fields} in clusterdyn.h, {structs.get(struct)} in "
                          f"{face}")


f_sigs, f_types = api_signatures.fortran(fortran)
compare("clusterdyn.f90", f_sigs, f_types, api_signatures.match_fortran)
# _library.py as a module of its package (it imports the generated _signatures.py), without the
# package's __init__ (which loads the library).
package = types.ModuleType("clusterdyn")
package.__path__ = [str(src / "python/clusterdyn")]
sys.modules["clusterdyn"] = package
library = importlib.import_module("clusterdyn._library")
p_sigs, p_structs = api_signatures.ctypes(
    library, {"ProximalSettings": "cdyn_proximal_settings",
              "ProximalResult": "cdyn_proximal_result",
              # contacts
              "ContactSettings": "cdyn_contact_settings",
              "ContactReport": "cdyn_contact_report"})
compare("_library.py", p_sigs, p_structs, api_signatures.match_ctypes)
typed = len(set(c_sigs) & set(f_sigs) & set(p_sigs))
for name in sorted(exported - set(p_sigs)):
    errors.append(f"_library.py declares no signature of the exported {name}")
# The checked-in ctypes signatures are the ones generate_ctypes.py writes from the header.
signatures = src / "python/clusterdyn/_signatures.py"
if signatures.read_text() != generate_ctypes.generate(header):
    errors.append(f"{signatures.relative_to(src)} differs from what capi/generate_ctypes.py writes "
                  "from clusterdyn.h: run `python3 capi/generate_ctypes.py`")

# ---- argument descriptions (capi_args.hpp) <-> parameter names and Fortran optional ----------
# Every array a description lists is a parameter of the same name in each function the
# description names (header), and in Fortran an `optional` dummy exactly when the description
# says kOpt ((NULL, 0) accepted), so the checks, the batches and the bindings say one thing.
described = api_signatures.descriptions((src / "capi/capi_args.hpp").read_text())
c_names = api_signatures.header_names(header)
f_optional = api_signatures.fortran_optional(fortran)
checked_descriptions = 0
for name, args in sorted(described.items()):
    if name not in functions:
        errors.append(f"capi_args.hpp describes {name}, which clusterdyn.h does not declare")
        continue
    checked_descriptions += 1
    for arg, optional in args:
        if arg not in c_names[name]:
            errors.append(f"{name}: capi_args.hpp names an argument {arg}, clusterdyn.h has "
                          f"{c_names[name]}")
            continue
        dummies = f_optional.get(name, {})
        # The module spells some one-letter matrices <name>mat (H -> hmat in the batches).
        fo = dummies.get(arg.lower(), dummies.get(arg.lower() + "mat"))
        if fo is None:
            errors.append(f"{name}: no Fortran dummy {arg.lower()}")
        elif fo != optional:
            errors.append(f"{name}: {arg} is {'optional' if optional else 'required'} in "
                          f"capi_args.hpp, {'optional' if fo else 'required'} in clusterdyn.f90")

for name in sorted(functions):
    if not re.search(rf"\b{name}\b", doc):
        errors.append(f"docs/c-api.md does not mention {name}")
blocks = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```\n", doc, re.S)
if len(blocks) < 3:
    errors.append(f"docs/c-api.md includes {len(blocks)} example files, expected >= 3")
for path, text in blocks:
    if (src / path).read_text() != text:
        errors.append(f"docs/c-api.md: the copy of {path} differs from the file")

print(f"{len(functions)} functions ({typed} with types in the three faces), {len(constants)} "
      f"constants, {len(blocks)} examples, {checked_descriptions} argument descriptions checked")
for e in errors:
    print("ERROR:", e)
sys.exit(1 if errors else 0)
