// STL and OBJ readers for mesh mass properties (mesh_files.hpp).
#include "model/mesh_files.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include "clusterdyn/status.hpp"

namespace clusterdyn::detail {
namespace {

[[noreturn]] void fail(const std::string& path, int line, const std::string& what) {
  throw ModelError(path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, "cannot read mesh file");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// One coordinate as MuJoCo keeps it (float).
bool parseCoordinate(const std::string& tok, double& out) {
  char* end = nullptr;
  const double x = std::strtod(tok.c_str(), &end);
  if (end == tok.c_str() || *end != '\0' || !std::isfinite(x)) return false;
  out = static_cast<double>(static_cast<float>(x));
  return std::isfinite(out);
}

/// Merges identical vertices (MuJoCo's STL decoder: by the float bit pattern).
class VertexMerger {
 public:
  explicit VertexMerger(TriangleMesh& m) : m_(m) {}
  int add(const Vec3& v) {
    const auto key = std::make_tuple(v(0), v(1), v(2));
    auto [it, inserted] = index_.emplace(key, static_cast<int>(m_.vertices.size()));
    if (inserted) m_.vertices.push_back(v);
    return it->second;
  }

 private:
  TriangleMesh& m_;
  std::map<std::tuple<double, double, double>, int> index_;
};

TriangleMesh readBinaryStl(const std::string& path, const std::string& bytes, uint32_t n) {
  TriangleMesh m;
  VertexMerger merge(m);
  for (uint32_t i = 0; i < n; ++i) {
    const char* facet = bytes.data() + 84 + 50 * static_cast<size_t>(i);
    std::array<int, 3> f{};
    for (int j = 0; j < 3; ++j) {
      float x[3];
      std::memcpy(x, facet + 12 * (j + 1), sizeof x);
      if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2]))
        fail(path, 0, "facet " + std::to_string(i) + " has a non-finite vertex");
      f[j] = merge.add(Vec3(x[0], x[1], x[2]));
    }
    m.faces.push_back(f);
  }
  return m;
}

TriangleMesh readAsciiStl(const std::string& path, const std::string& text) {
  TriangleMesh m;
  VertexMerger merge(m);
  std::istringstream in(text);
  std::string line;
  int lineNo = 0, inFacet = 0, facetLine = 0;
  std::array<int, 3> f{};
  while (std::getline(in, line)) {
    ++lineNo;
    std::istringstream ls(line);
    std::string key;
    if (!(ls >> key)) continue;
    if (key == "facet") {
      if (inFacet) fail(path, lineNo, "'facet' inside a facet");
      inFacet = 1;
      facetLine = lineNo;
    } else if (key == "vertex") {
      if (!inFacet) fail(path, lineNo, "'vertex' outside a facet");
      if (inFacet > 3) fail(path, lineNo, "a facet has more than 3 vertices");
      Vec3 v;
      std::string tok;
      for (int k = 0; k < 3; ++k)
        if (!(ls >> tok) || !parseCoordinate(tok, v(k)))
          fail(path, lineNo, "expected 'vertex x y z' with 3 finite numbers");
      f[inFacet - 1] = merge.add(v);
      ++inFacet;
    } else if (key == "endfacet") {
      if (inFacet != 4) fail(path, lineNo, "a facet needs exactly 3 vertices");
      m.faces.push_back(f);
      inFacet = 0;
    } else if (key != "solid" && key != "endsolid" && key != "outer" && key != "endloop") {
      fail(path, lineNo, "unexpected '" + key + "' in an ASCII STL file");
    }
  }
  if (inFacet) fail(path, facetLine, "facet not closed by 'endfacet'");
  if (m.faces.empty()) fail(path, 0, "no facets");
  return m;
}

}  // namespace

TriangleMesh readStl(const std::string& path) {
  const std::string bytes = readAll(path);
  if (bytes.size() >= 84) {
    uint32_t n = 0;
    std::memcpy(&n, bytes.data() + 80, sizeof n);
    if (n > 0 && bytes.size() == 84 + 50 * static_cast<size_t>(n))
      return readBinaryStl(path, bytes, n);
  }
  if (bytes.compare(0, 5, "solid") == 0) return readAsciiStl(path, bytes);
  fail(path, 0,
       "neither a binary STL file (84 + 50 n bytes) nor an ASCII one (starting with 'solid')");
}

TriangleMesh readObj(const std::string& path) {
  const std::string text = readAll(path);
  TriangleMesh m;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  bool newGroup = false;  // an 'o' / 'g' line after faces: tinyobjloader's next shape
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ls(line);
    std::string key;
    if (!(ls >> key) || key[0] == '#') continue;
    if (key == "v") {
      Vec3 v;
      std::string tok;
      for (int k = 0; k < 3; ++k)
        if (!(ls >> tok) || !parseCoordinate(tok, v(k)))
          fail(path, lineNo, "expected 'v x y z' with 3 finite numbers");
      m.vertices.push_back(v);
    } else if (key == "f") {
      if (newGroup)
        fail(path, lineNo,
             "faces in a second object or group: MuJoCo reads the first one only (merge them)");
      std::vector<int> idx;
      std::string tok;
      while (ls >> tok) {
        char* end = nullptr;
        const long i = std::strtol(tok.c_str(), &end, 10);
        if (end == tok.c_str() || (*end != '\0' && *end != '/') || i == 0)
          fail(path, lineNo, "bad face vertex '" + tok + "'");
        const long nv = static_cast<long>(m.vertices.size());
        const long k = i > 0 ? i - 1 : nv + i;
        if (k < 0 || k >= nv)
          fail(path, lineNo,
               "face vertex " + std::to_string(i) + " does not exist (" + std::to_string(nv) +
                   " vertices so far)");
        idx.push_back(static_cast<int>(k));
      }
      if (idx.size() < 3 || idx.size() > 4)
        fail(path, lineNo, "only triangles and quads are supported (as in MuJoCo)");
      m.faces.push_back({idx[0], idx[1], idx[2]});
      if (idx.size() == 4) m.faces.push_back({idx[0], idx[2], idx[3]});
    } else if (key == "o" || key == "g") {
      newGroup = newGroup || !m.faces.empty();
    }
    // vt, vn, s, usemtl, mtllib, l, p: no mass
  }
  if (m.faces.empty()) fail(path, 0, "no faces");
  return m;
}

}  // namespace clusterdyn::detail
