// Triangle mesh files for mass properties: STL (binary and ASCII) and Wavefront OBJ. Vertices
// are rounded to single precision, as MuJoCo stores them (its inertias then agree with
// clusterdyn's to double precision).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> faces;  ///< vertex indices, counter-clockwise seen from outside
};

/// Binary STL (84-byte header and count, 50 bytes per facet; identical vertices merged, as
/// MuJoCo does) or ASCII STL ("solid ... facet ... vertex x y z ... endsolid"). ModelError
/// "path[:line]: message" for a file that cannot be read or is malformed.
TriangleMesh readStl(const std::string& path);

/// OBJ: "v x y z", "f i j k [l]" (i, i/t, i//n, i/t/n; negative = relative), triangles and
/// quads (split (0 1 2), (0 2 3) as MuJoCo), the faces of the first object / group only being
/// what MuJoCo reads (faces in a later object or group: error).
TriangleMesh readObj(const std::string& path);

}  // namespace clusterdyn::detail
