// MJCF attribute reading: <default> classes, numbers, frame orientations (MuJoCo's
// ResolveOrientation) and the mass properties of primitive geoms (MuJoCo's
// mjCGeom::GetVolume / SetInertia, volume inertia).
#include <Eigen/Eigenvalues>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/log.hpp"
#include "model/mjcf_detail.hpp"
#include "model/xml_common.hpp"

namespace clusterdyn::mjcf {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kEps = 1e-14;  // MuJoCo's mjEPS

using detail::parseDouble;

Mat3 quatProductMatrix(const Eigen::Quaterniond& q) { return q.normalized().toRotationMatrix(); }

}  // namespace

// --- Context ---------------------------------------------------------------------------------

void Context::fail(const XMLElement* e, const std::string& what) const {
  detail::throwAtElement(fileOf(e), e, what);
}

void Context::warnOnce(const XMLElement* e, const std::string& key, const std::string& what) {
  auto it = warnings_.find(key);
  if (it != warnings_.end()) {
    ++it->second.count;
    return;
  }
  std::ostringstream os;
  os << fileOf(e) << ":" << (e ? e->GetLineNum() : 0) << ": <" << (e ? e->Name() : "?")
     << ">: " << what;
  warnings_[key] = Warning{os.str(), 1};
  warningOrder_.push_back(key);
}

std::vector<std::string> Context::flushWarnings() const {
  std::vector<std::string> out;
  for (const auto& key : warningOrder_) {
    const Warning& w = warnings_.at(key);
    out.push_back(w.count > 1 ? w.text + " (" + std::to_string(w.count) + " occurrences)" : w.text);
    log::warn("{}", out.back());
  }
  return out;
}

void Context::checkAttributes(const XMLElement* e, const char* known) {
  const std::string list = std::string(" ") + known + " ";
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (list.find(" " + name + " ") != std::string::npos) continue;
    warnOnce(e, std::string(e->Name()) + "@" + name,
             "attribute '" + name + "' ignored (no effect on the dynamics)");
  }
}

void Context::readDefaults(const XMLElement* d, const std::string& parentClass) {
  std::string cls = "main";
  if (const char* c = d->Attribute("class")) cls = c;
  if (parentClass.empty() && !d->Attribute("class")) cls = "main";
  if (!parentClass.empty() && !d->Attribute("class"))
    fail(d, "a nested <default> needs a 'class' attribute");
  if (classes_.count(cls) && !parentClass.empty()) fail(d, "duplicate default class '" + cls + "'");
  if (!parentClass.empty()) classes_[cls] = classes_[parentClass];
  auto& mine = classes_[cls];
  // This class's own elements first, then the nested classes (which inherit all of them,
  // wherever they stand in the file).
  for (const XMLElement* c : children(d)) {
    const std::string tag = c->Name();
    if (tag == "default") continue;
    AttributeMap& attrs = mine[tag];
    for (const tinyxml2::XMLAttribute* a = c->FirstAttribute(); a; a = a->Next())
      attrs[a->Name()] = a->Value();
  }
  for (const XMLElement* c : children(d, "default")) readDefaults(c, cls);
}

const std::string* Context::classAttribute(const std::string& cls, const std::string& tag,
                                           const std::string& attr) const {
  auto c = classes_.find(cls);
  if (c == classes_.end()) return nullptr;
  auto t = c->second.find(tag);
  if (t == c->second.end()) return nullptr;
  auto a = t->second.find(attr);
  return a == t->second.end() ? nullptr : &a->second;
}

// --- Elem ------------------------------------------------------------------------------------

Elem::Elem(const XMLElement* e, Context& ctx, const std::string& inheritedClass)
    : e_(e), ctx_(&ctx), cls_(inheritedClass.empty() ? "main" : inheritedClass) {
  if (const char* c = e->Attribute("class")) {
    cls_ = c;
    if (!ctx.hasClass(cls_)) ctx.fail(e, "attribute 'class': unknown default class '" + cls_ + "'");
  }
}

const char* Elem::raw(const char* attr) const {
  if (const char* s = e_->Attribute(attr)) return s;
  // <freejoint> takes no defaults; every other element kind reads its own tag's defaults
  const std::string* s = ctx_->classAttribute(cls_, e_->Name(), attr);
  return s ? s->c_str() : nullptr;
}

std::string Elem::str(const char* attr, const std::string& def) const {
  const char* s = raw(attr);
  return s ? std::string(s) : def;
}

double Elem::number(const char* attr, double def) const {
  const char* s = raw(attr);
  if (!s) return def;
  double x = 0.0;
  if (!parseDouble(s, x))
    fail(std::string("attribute '") + attr + "': expected a number, got '" + s + "'");
  if (!std::isfinite(x))
    fail(std::string("attribute '") + attr + "': expected a finite number, got '" + s + "'");
  return x;
}

std::vector<double> Elem::numbers(const char* attr, int n, const std::vector<double>& def,
                                  int minCount) const {
  const char* s = raw(attr);
  if (!s) return def;
  std::istringstream is(s);
  std::string tok;
  std::vector<double> vals;
  while (is >> tok) {
    double x = 0.0;
    if (!parseDouble(tok, x) || !std::isfinite(x))
      fail(std::string("attribute '") + attr + "': expected " + std::to_string(n) +
           " finite numbers, got '" + s + "'");
    vals.push_back(x);
  }
  const int lo = minCount < 0 ? n : minCount;
  if (static_cast<int>(vals.size()) < lo || static_cast<int>(vals.size()) > n)
    fail(std::string("attribute '") + attr + "': expected " +
         (lo == n ? std::to_string(n) : std::to_string(lo) + " to " + std::to_string(n)) +
         " numbers, got '" + s + "'");
  for (size_t k = vals.size(); k < def.size() && static_cast<int>(k) < n; ++k)
    vals.push_back(def[k]);
  return vals;
}

Vec3 Elem::vec3(const char* attr, const Vec3& def) const {
  const auto v = numbers(attr, 3, {def(0), def(1), def(2)});
  return Vec3(v[0], v[1], v[2]);
}

bool Elem::boolean(const char* attr, bool def) const {
  const char* s = raw(attr);
  if (!s) return def;
  const std::string v = s;
  if (v == "true") return true;
  if (v == "false") return false;
  fail(std::string("attribute '") + attr + "': expected true or false, got '" + v + "'");
}

Mat3 quatToMatrix(double w, double x, double y, double z) {
  return quatProductMatrix(Eigen::Quaterniond(w, x, y, z));
}

Mat3 zAxisRotation(const Vec3& vec) {
  Vec3 axis = Vec3::UnitZ().cross(vec);
  const double s = axis.norm();
  if (s < 1e-10)
    axis = Vec3::UnitX();
  else
    axis /= s;
  const double angle = std::atan2(s, vec(2));
  return Eigen::AngleAxisd(angle, axis).toRotationMatrix();
}

Transform Elem::frame() const {
  Transform X;
  X.p = vec3("pos", Vec3::Zero());
  const char* kinds[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
  int given = 0;
  for (const char* k : kinds) given += has(k) ? 1 : 0;
  if (given > 1)
    fail("more than one orientation attribute (quat, axisangle, euler, xyaxes, zaxis)");
  const Compiler& c = ctx_->compiler;
  const double unit = c.degree ? kPi / 180.0 : 1.0;
  if (has("quat")) {
    const auto q = numbers("quat", 4, {});
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n < kEps) fail("attribute 'quat': zero quaternion");
    X.R = quatToMatrix(q[0], q[1], q[2], q[3]);
  } else if (has("axisangle")) {
    const auto a = numbers("axisangle", 4, {});
    const Vec3 axis(a[0], a[1], a[2]);
    if (axis.norm() < kEps) fail("attribute 'axisangle': axisangle too small");
    X.R = Eigen::AngleAxisd(a[3] * unit, axis.normalized()).toRotationMatrix();
  } else if (has("euler")) {
    const Vec3 e = vec3("euler", Vec3::Zero());
    if (c.eulerseq.size() != 3) fail("<compiler eulerseq> must have 3 characters");
    Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
    for (int i = 0; i < 3; ++i) {
      const char ax = c.eulerseq[i];
      const int k = (ax == 'x' || ax == 'X') ? 0 : (ax == 'y' || ax == 'Y') ? 1 : 2;
      const Eigen::Quaterniond r(Eigen::AngleAxisd(e(i) * unit, Vec3::Unit(k)));
      q = (ax >= 'a') ? q * r : r * q;  // lower case: moving axes (post-multiply)
    }
    X.R = q.toRotationMatrix();
  } else if (has("xyaxes")) {
    const auto a = numbers("xyaxes", 6, {});
    Vec3 x(a[0], a[1], a[2]), y(a[3], a[4], a[5]);
    if (x.norm() < kEps) fail("attribute 'xyaxes': xaxis too small");
    x.normalize();
    y -= x * x.dot(y);
    if (y.norm() < kEps) fail("attribute 'xyaxes': yaxis too small");
    y.normalize();
    X.R.col(0) = x;
    X.R.col(1) = y;
    X.R.col(2) = x.cross(y).normalized();
  } else if (has("zaxis")) {
    const Vec3 z = vec3("zaxis", Vec3::UnitZ());
    if (z.norm() < kEps) fail("attribute 'zaxis': zaxis too small");
    X.R = zAxisRotation(z.normalized());
  }
  return X;
}

// --- mass properties -------------------------------------------------------------------------

namespace {

/// Volume and principal inertia per unit mass of a primitive (MuJoCo, volume inertia).
bool primitive(const std::string& type, const std::vector<double>& s, double& volume,
               Vec3& unitInertia) {
  if (type == "sphere") {
    volume = 4.0 * kPi * s[0] * s[0] * s[0] / 3.0;
    unitInertia.setConstant(2.0 * s[0] * s[0] / 5.0);
  } else if (type == "capsule") {
    const double r = s[0], h = 2.0 * s[1];
    volume = kPi * (r * r * h + 4.0 * r * r * r / 3.0);
    const double sm = 4.0 * r / (4.0 * r + 3.0 * h);  // sphere mass fraction
    const double cm = 1.0 - sm;
    const double side = cm * (3.0 * r * r + h * h) / 12.0 + 2.0 * sm * r * r / 5.0 +
                        sm * h * (3.0 * r + 2.0 * h) / 8.0;
    unitInertia = Vec3(side, side, cm * r * r / 2.0 + 2.0 * sm * r * r / 5.0);
  } else if (type == "cylinder") {
    const double r = s[0], h = 2.0 * s[1];
    volume = kPi * r * r * h;
    const double side = (3.0 * r * r + h * h) / 12.0;
    unitInertia = Vec3(side, side, r * r / 2.0);
  } else if (type == "ellipsoid") {
    volume = 4.0 * kPi * s[0] * s[1] * s[2] / 3.0;
    const double a = s[0] * s[0], b = s[1] * s[1], c = s[2] * s[2];
    unitInertia = Vec3(b + c, a + c, a + b) / 5.0;
  } else if (type == "box") {
    volume = 8.0 * s[0] * s[1] * s[2];
    const double a = s[0] * s[0], b = s[1] * s[1], c = s[2] * s[2];
    unitInertia = Vec3(b + c, a + c, a + b) / 3.0;
  } else {
    return false;
  }
  return true;
}

}  // namespace

GeomInertia geomInertia(const std::vector<Elem>& geoms, const std::string& bodyName,
                        MeshAssets& meshes) {
  struct Part {
    double mass;
    Vec3 com;  ///< body frame
    Mat3 I;    ///< about com, body axes
  };
  std::vector<Part> parts;
  GeomInertia out;
  const Compiler& c = geoms.empty() ? Compiler() : geoms[0].ctx().compiler;
  for (const Elem& g : geoms) {
    const int group = static_cast<int>(g.number("group", 0.0));
    if (group < c.inertiaGroupLo || group > c.inertiaGroupHi) continue;
    const std::string type = g.str("type", "sphere");
    const bool massGiven = g.has("mass");
    const double mass = g.number("mass", 0.0);
    const double density = g.number("density", 1000.0);
    if (mass < 0.0 || density < 0.0) g.fail("mass or density is negative");
    if ((massGiven && mass == 0.0) || (!massGiven && density == 0.0)) continue;
    if (type == "plane" || type == "hfield")
      g.fail("a " + type + " geom can only be in a static body (body '" + bodyName + "')");
    if (type == "sdf")
      g.fail("body '" + bodyName +
             "' takes its inertia from this sdf geom, which clusterdyn does not read: give the "
             "body an <inertial> element (or set the geom's mass=\"0\" / density=\"0\")");
    if (type != "mesh" && g.has("mesh"))
      g.fail("a " + type +
             " geom with attribute 'mesh' is fitted to the mesh by MuJoCo "
             "(<compiler fitaabb>); not supported: give body '" +
             bodyName + "' an <inertial> element (or set the geom's mass=\"0\")");
    if (g.has("shellinertia") && g.boolean("shellinertia", false))
      g.fail(type == "mesh"
                 ? "attribute 'shellinertia': for mesh geoms the inertia type is the mesh "
                   "asset's attribute 'inertia' (MuJoCo)"
                 : "attribute 'shellinertia': shell inertia is not supported (use an <inertial>)");
    if (type == "mesh") {  // MuJoCo: mjCGeom::Compile, GetVolume, SetInertia of a mesh geom
      if (!g.has("mesh")) g.fail("missing attribute 'mesh'");
      if (g.has("fromto")) g.fail("attribute 'fromto' cannot be used with a mesh geom");
      const MeshMass& mm = meshes.mass(g.str("mesh", ""), g);
      double m = density * mm.measure;
      if (massGiven) {
        if (mm.measure <= kEps) continue;
        m = mass;
      }
      const Transform X = g.frame();
      parts.push_back(
          Part{m, X.R * mm.com + X.p, X.R * (m / mm.measure * mm.inertia) * X.R.transpose()});
      continue;
    }
    const char* typeInertia = g.raw("typeinertia");  // not in every MuJoCo version
    if (typeInertia && std::string(typeInertia) != "volume")
      g.fail("attribute 'typeinertia': only 'volume' is supported");
    std::vector<double> size = g.numbers("size", 3, {0.0, 0.0, 0.0}, 1);
    Transform X = g.frame();
    if (g.has("fromto")) {
      const auto ft = g.numbers("fromto", 6, {});
      if (type != "capsule" && type != "cylinder" && type != "box" && type != "ellipsoid")
        g.fail("attribute 'fromto': only for capsule, cylinder, box and ellipsoid geoms");
      const Vec3 a(ft[0], ft[1], ft[2]), b(ft[3], ft[4], ft[5]);
      const double half = (b - a).norm() / 2.0;
      if (half < kEps) g.fail("attribute 'fromto': the two points coincide");
      X = Transform(zAxisRotation(b - a), (a + b) / 2.0);
      if (type == "capsule" || type == "cylinder")
        size[1] = half;
      else
        size = {size[0], size[0], half};
    }
    double volume = 0.0;
    Vec3 unit = Vec3::Zero();
    if (!primitive(type, size, volume, unit))
      g.fail("attribute 'type': unknown geom type '" + type + "'");
    for (double s : size)
      if (s < 0.0) g.fail("attribute 'size': negative size");
    double m = density * volume;
    if (massGiven) {
      if (volume <= kEps) continue;  // MuJoCo: mass on a zero-volume geom is dropped
      m = mass;
    }
    parts.push_back(Part{m, X.p, X.R * (m * unit).asDiagonal() * X.R.transpose()});
  }
  for (const Part& p : parts) {
    out.mass += p.mass;
    out.com += p.mass * p.com;
  }
  out.geoms = static_cast<int>(parts.size());
  if (out.mass <= 0.0) return out;
  out.com /= out.mass;
  for (const Part& p : parts) {
    const Vec3 d = p.com - out.com;
    out.inertia += p.I + p.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
  }
  return out;
}

UrdfInertial readInertial(const Elem& in, const std::string& bodyName) {
  UrdfInertial r;
  r.present = true;
  if (!in.has("pos")) in.fail("missing attribute 'pos' (body '" + bodyName + "')");
  if (!in.has("mass")) in.fail("missing attribute 'mass' (body '" + bodyName + "')");
  r.mass = in.number("mass", 0.0);
  if (r.mass < 0.0) in.fail("attribute 'mass': mass must be >= 0");
  r.origin = in.frame();
  const bool diag = in.has("diaginertia"), full = in.has("fullinertia");
  if (diag == full)
    in.fail("exactly one of 'diaginertia' and 'fullinertia' is required (body '" + bodyName + "')");
  if (diag) {
    const Vec3 d = in.vec3("diaginertia", Vec3::Zero());
    r.inertia = d.asDiagonal();
  } else {
    if (in.has("quat") || in.has("axisangle") || in.has("euler") || in.has("xyaxes") ||
        in.has("zaxis"))
      in.fail("'fullinertia' cannot be combined with an orientation");
    const auto f = in.numbers("fullinertia", 6, {});
    r.inertia << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
  }
  Eigen::SelfAdjointEigenSolver<Mat3> es(r.inertia, Eigen::EigenvaluesOnly);
  const Vec3& ev = es.eigenvalues();
  const double scale = std::max(1.0, r.inertia.cwiseAbs().maxCoeff());
  if (ev(0) < -1e-12 * scale)
    in.fail("inertia of body '" + bodyName + "' is not positive semi-definite");
  if (ev(0) + ev(1) < ev(2) - 1e-9 * scale)
    in.fail("inertia of body '" + bodyName +
            "' violates the triangle inequality I1 + I2 >= I3 (MuJoCo rejects it too)");
  return r;
}

}  // namespace clusterdyn::mjcf
