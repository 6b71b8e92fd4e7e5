// MJCF mesh assets: the mass properties MuJoCo infers from a mesh (mjCMesh::Process,
// ComputeVolume, ComputeInertia; XML reference "mesh/inertia"), per unit density, for the geoms
// that give a moving body its inertia. Volumes of the tetrahedra between each face and a
// reference point, signed (O'Rourke 1998, Computational Geometry in C, section 1.3.8), the
// second moments of each tetrahedron in closed form.
#include <Eigen/Eigenvalues>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include "model/mesh_files.hpp"
#include "model/mjcf_detail.hpp"

namespace clusterdyn::mjcf {
namespace {

constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL

enum class Mode { Legacy, Convex, Exact, Shell };

bool isAbsolute(const std::string& p) { return !p.empty() && p[0] == '/'; }

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string baseName(const std::string& p) {
  const size_t k = p.find_last_of('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}

std::string lowerExtension(const std::string& p) {
  const std::string b = baseName(p);
  const size_t k = b.find_last_of('.');
  std::string e = k == std::string::npos ? "" : b.substr(k + 1);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

/// Area, unit normal and centroid of a triangle (MuJoCo's triangle()).
double triangle(const Vec3& a, const Vec3& b, const Vec3& c, Vec3& normal, Vec3& center) {
  normal = (b - a).cross(c - a);
  const double n = normal.norm();
  if (n > 0.0) normal /= n;
  center = (a + b + c) / 3.0;
  return n / 2.0;
}

/// Mesh file path (XML reference, compiler/meshdir): an absolute file name as is; else an
/// absolute meshdir + file; else the main file's directory + meshdir + file.
std::string meshPath(const Context& ctx, std::string file) {
  const Compiler& c = ctx.compiler;
  if (c.strippath) file = baseName(file);
  if (isAbsolute(file)) return file;
  if (isAbsolute(c.meshdir)) return join(c.meshdir, file);
  return ctx.modelDir() + join(c.meshdir, file);
}

detail::TriangleMesh loadMesh(const Elem& m) {
  detail::TriangleMesh t;
  if (m.has("file")) {
    if (m.has("vertex") || m.has("face"))
      m.fail("attribute 'file' together with 'vertex' / 'face' (MuJoCo: repeated specification)");
    m.ctx().requireFiles(m.xml(), m.str("file", ""));
    const std::string path = meshPath(m.ctx(), m.str("file", ""));
    std::string type = lowerExtension(path);
    const std::string ct = m.str("content_type", "");
    if (ct == "model/stl") type = "stl";
    if (ct == "model/obj") type = "obj";
    try {
      if (type == "stl")
        t = detail::readStl(path);
      else if (type == "obj")
        t = detail::readObj(path);
      else
        m.fail("attribute 'file': mesh files of type '" + type +
               "' are not read by clusterdyn (stl, obj are)");
    } catch (const ModelError& e) {
      if (type != "stl" && type != "obj") throw;
      m.fail(std::string("mesh file: ") + e.what());
    }
  } else {
    const char* v = m.raw("vertex");
    if (!v) m.fail("a mesh needs attribute 'file' or 'vertex'");
    std::istringstream vs(v);
    std::vector<double> x;
    for (double d; vs >> d;) x.push_back(static_cast<double>(static_cast<float>(d)));
    if (!vs.eof() || x.size() % 3) m.fail("attribute 'vertex': expected 3 n numbers");
    for (size_t k = 0; k + 2 < x.size(); k += 3) t.vertices.emplace_back(x[k], x[k + 1], x[k + 2]);
    const char* f = m.raw("face");
    if (!f)
      m.fail(
          "a mesh without 'face' is the convex hull of its vertices (MuJoCo), which "
          "clusterdyn does not compute: give its faces");
    std::istringstream fs(f);
    std::vector<int> i;
    for (int d; fs >> d;) i.push_back(d);
    if (!fs.eof() || i.size() % 3) m.fail("attribute 'face': expected 3 n vertex indices");
    for (size_t k = 0; k + 2 < i.size(); k += 3) t.faces.push_back({i[k], i[k + 1], i[k + 2]});
  }
  if (t.vertices.size() < 4) m.fail("a mesh needs at least 4 vertices (MuJoCo)");
  for (const auto& f : t.faces)
    for (int k : f)
      if (k < 0 || k >= static_cast<int>(t.vertices.size()))
        m.fail("face vertex index " + std::to_string(k) + " does not exist");
  return t;
}

/// Directed edges without their opposite (a closed, consistently oriented surface has none),
/// and repeated directed edges (inconsistent orientation), over vertices merged by position.
struct EdgeCheck {
  int unmatched = 0, repeated = 0;
  std::pair<int, int> example{-1, -1};
};
EdgeCheck checkEdges(const detail::TriangleMesh& t) {
  std::map<std::tuple<double, double, double>, int> id;
  std::vector<int> v(t.vertices.size());
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = id.emplace(std::make_tuple(t.vertices[k](0), t.vertices[k](1), t.vertices[k](2)),
                      static_cast<int>(id.size()))
               .first->second;
  std::map<std::pair<int, int>, int> count;
  for (const auto& f : t.faces)
    for (int k = 0; k < 3; ++k) ++count[{v[f[k]], v[f[(k + 1) % 3]]}];
  EdgeCheck r;
  for (const auto& [e, n] : count) {
    if (n > 1) ++r.repeated;
    auto o = count.find({e.second, e.first});
    if (o == count.end() || o->second != n) {
      ++r.unmatched;
      r.example = {e.first + 1, e.second + 1};
    }
  }
  return r;
}

/// True when every vertex is on the inner side of every face plane (a closed convex mesh: its
/// convex hull is itself).
bool isConvex(const std::vector<Vec3>& x, const detail::TriangleMesh& t) {
  double diam = 0.0;
  for (const Vec3& p : x) diam = std::max(diam, (p - x[0]).norm());
  for (const auto& f : t.faces) {
    Vec3 n, c;
    if (triangle(x[f[0]], x[f[1]], x[f[2]], n, c) <= kMinVal) continue;
    for (const Vec3& p : x)
      if (n.dot(p - x[f[0]]) > 1e-10 * diam) return false;
  }
  return true;
}

/// MuJoCo's ComputeVolume / ComputeSurfaceArea then ComputeInertia (per unit density).
MeshMass integrate(const std::vector<Vec3>& x, const detail::TriangleMesh& t, Mode mode,
                   const Elem& m, const std::string& name) {
  Vec3 n, c, facecen = Vec3::Zero();
  double area = 0.0;
  for (const auto& f : t.faces) {
    const double a = triangle(x[f[0]], x[f[1]], x[f[2]], n, c);
    facecen += a * c;
    area += a;
  }
  if (area < kMinVal) m.fail("mesh '" + name + "': surface area too small");
  facecen /= area;
  MeshMass r;
  double total = 0.0;
  for (const auto& f : t.faces) {
    const double a = triangle(x[f[0]], x[f[1]], x[f[2]], n, c);
    double v = mode == Mode::Shell ? a : (c - facecen).dot(n) * a / 3.0;
    if (mode == Mode::Legacy) v = std::abs(v);
    total += v;
    r.com += v * (c * 0.75 + facecen * 0.25);
  }
  if (total >= kMinVal) r.com /= total;
  if (mode != Mode::Shell && total < kMinVal)
    m.fail("mesh '" + name + "': " +
           (total < 0.0 ? "volume is negative (faces oriented inwards)"
                        : "volume too small (MuJoCo: try inertia=\"shell\")"));
  const int k[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  double P[6] = {0, 0, 0, 0, 0, 0};
  total = 0.0;
  const double C = mode == Mode::Shell ? 12.0 : 20.0;
  for (const auto& f : t.faces) {
    const Vec3 D = x[f[0]] - r.com, E = x[f[1]] - r.com, F = x[f[2]] - r.com;
    const double a = triangle(D, E, F, n, c);
    double v = mode == Mode::Shell ? a : c.dot(n) * a / 3.0;
    if (mode == Mode::Legacy) v = std::abs(v);
    total += v;
    for (int j = 0; j < 6; ++j) {
      const int p = k[j][0], q = k[j][1];
      P[j] += v / C *
              (2 * (D(p) * D(q) + E(p) * E(q) + F(p) * F(q)) + D(p) * E(q) + D(q) * E(p) +
               D(p) * F(q) + D(q) * F(p) + E(p) * F(q) + E(q) * F(p));
    }
  }
  r.measure = total;
  r.inertia << P[1] + P[2], -P[3], -P[4], -P[3], P[0] + P[2], -P[5], -P[4], -P[5], P[0] + P[1];
  const Vec3 e =
      Eigen::SelfAdjointEigenSolver<Mat3>(r.inertia, Eigen::EigenvaluesOnly).eigenvalues();
  if (e(2) <= 0.0) m.fail("mesh '" + name + "': inertia eigenvalues must be positive");
  if (e(0) + e(1) < e(2) * (1.0 - 1e-6) - 1e-9)
    m.fail("mesh '" + name + "': inertia eigenvalues violate A + B >= C (MuJoCo rejects it too)");
  return r;
}

MeshMass compute(const Elem& m, const std::string& name) {
  const std::string modeName = m.str("inertia", "legacy");  // MuJoCo's default
  Mode mode = Mode::Legacy;
  if (modeName == "convex")
    mode = Mode::Convex;
  else if (modeName == "exact")
    mode = Mode::Exact;
  else if (modeName == "shell")
    mode = Mode::Shell;
  else if (modeName != "legacy")
    m.fail("attribute 'inertia': expected convex, exact, legacy or shell, got '" + modeName + "'");
  if (m.has("builtin")) m.fail("attribute 'builtin': generated meshes are not supported");
  detail::TriangleMesh t = loadMesh(m);
  // MuJoCo's ApplyTransformations: refpos, refquat (inverse), then scale
  const Vec3 refpos = m.vec3("refpos", Vec3::Zero());
  const auto rq = m.numbers("refquat", 4, {1.0, 0.0, 0.0, 0.0});
  const Mat3 R = quatToMatrix(rq[0], rq[1], rq[2], rq[3]);
  const Vec3 scale = m.vec3("scale", Vec3::Ones());
  std::vector<Vec3> x(t.vertices.size());
  for (size_t k = 0; k < x.size(); ++k)
    x[k] = (R.transpose() * (t.vertices[k] - refpos)).cwiseProduct(scale);
  if (scale.prod() < 0.0)  // a mirrored mesh keeps its faces outward (MuJoCo)
    for (auto& f : t.faces) std::swap(f[1], f[2]);
  const EdgeCheck edges = checkEdges(t);
  const std::string pair =
      std::to_string(edges.example.first) + " and " + std::to_string(edges.example.second);
  if (mode == Mode::Exact && (edges.repeated || edges.unmatched))
    m.fail("mesh '" + name + "': inertia=\"exact\" needs a closed, consistently oriented mesh (" +
           std::to_string(edges.unmatched) + " edges without an opposite face, e.g. between " +
           "vertices " + pair + ")");
  if (mode == Mode::Convex && m.number("maxhullvert", -1.0) != -1.0)
    m.fail(
        "attribute 'maxhullvert': MuJoCo's truncated convex hull is not computed by "
        "clusterdyn (inertia=\"convex\"): remove it or use inertia=\"exact\"");
  if (mode == Mode::Convex) {
    // MuJoCo integrates the convex hull; it is the mesh itself when the mesh is closed and
    // convex. clusterdyn computes no hulls: anything else is an error, not an approximation.
    if (edges.repeated || edges.unmatched || !isConvex(x, t))
      m.fail("mesh '" + name +
             "': inertia=\"convex\" integrates the mesh's convex hull, which "
             "clusterdyn computes only for closed convex meshes (this one is not): use "
             "inertia=\"exact\", or give the body an <inertial>");
    mode = Mode::Exact;
  }
  MeshMass r = integrate(x, t, mode, m, name);
  if (mode == Mode::Legacy) {
    Context& ctx = m.ctx();
    if (edges.repeated || edges.unmatched) {
      ctx.warnOnce(m.xml(), "mesh-open:" + name,
                   "mesh '" + name + "' is not closed or not consistently oriented (edge " + pair +
                       "): its inertia (MuJoCo's legacy algorithm, as MuJoCo) is not the "
                       "inertia of a solid");
    } else {
      const MeshMass exact = integrate(x, t, Mode::Exact, m, name);
      if (std::abs(exact.measure - r.measure) > 1e-9 * r.measure)
        ctx.warnOnce(m.xml(), "mesh-legacy:" + name,
                     "mesh '" + name +
                         "' is not convex: MuJoCo's default inertia=\"legacy\" "
                         "counts a volume of " +
                         std::to_string(r.measure) + " instead of " +
                         std::to_string(exact.measure) +
                         "; clusterdyn follows MuJoCo (set "
                         "inertia=\"exact\" for the solid's inertia)");
    }
  }
  return r;
}

}  // namespace

void MeshAssets::add(const Elem& mesh) {
  std::string name = mesh.str("name", "");
  if (name.empty()) {
    if (!mesh.has("file")) mesh.fail("a mesh without 'file' needs a 'name'");
    name = baseName(mesh.str("file", ""));
    const size_t k = name.find_last_of('.');
    if (k != std::string::npos) name = name.substr(0, k);
  }
  if (!elems_.emplace(name, mesh).second) mesh.fail("duplicate mesh name '" + name + "'");
}

const MeshMass& MeshAssets::mass(const std::string& name, const Elem& geom) {
  auto c = cache_.find(name);
  if (c != cache_.end()) return c->second;
  auto e = elems_.find(name);
  if (e == elems_.end()) geom.fail("attribute 'mesh': unknown mesh '" + name + "'");
  return cache_.emplace(name, compute(e->second, name)).first->second;
}

}  // namespace clusterdyn::mjcf
