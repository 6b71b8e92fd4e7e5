#include "test_util.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace clusterdyn::test {

namespace {

constexpr double kPi = 3.14159265358979323846;
const double kInf = std::numeric_limits<double>::infinity();

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

Vec3 uniformVec3(std::mt19937_64& rng, double s) {
  return Vec3(uniform(rng, -s, s), uniform(rng, -s, s), uniform(rng, -s, s));
}

/// URDF roll-pitch-yaw rotation written out entry by entry (R = Rz(y) Ry(p) Rx(r)), independent
/// of the library's rpyToMatrix.
Mat3 rpyMatrix(const Vec3& rpy) {
  const double cr = std::cos(rpy.x()), sr = std::sin(rpy.x());
  const double cp = std::cos(rpy.y()), sp = std::sin(rpy.y());
  const double cy = std::cos(rpy.z()), sy = std::sin(rpy.z());
  Mat3 R;
  R << cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,  //
      sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,   //
      -sp, cp * sr, cp * cr;
  return R;
}

/// Number written so that strtod reads back exactly the same double.
std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}
std::string vec(const Vec3& v) { return num(v.x()) + " " + num(v.y()) + " " + num(v.z()); }

/// One link of a random mechanism and the joint that attaches it to its parent link.
struct SpecLink {
  std::string name;
  int parent = -1;  // parent link (-1: the root link)
  std::string jointName, jointType;
  Vec3 xyz = Vec3::Zero(), rpy = Vec3::Zero();
  bool writeXyz = true, writeRpy = true;
  Vec3 axis = Vec3::UnitX();
  bool writeAxis = false;
  bool hasLimit = false;
  double lower = 0, upper = 0, effort = 0, velocity = 0;
  bool hasInertial = false;
  double mass = 0;
  Vec3 com = Vec3::Zero(), comRpy = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();  // about the COM, inertial-frame axes
};

std::vector<SpecLink> randomSpec(std::mt19937_64& rng, const RandomModelOptions& o) {
  std::vector<SpecLink> links;
  SpecLink root;
  root.name = o.floatingBase ? "world" : "base_link";
  links.push_back(root);
  std::vector<int> path = {0};  // ancestors of the last link, root first
  int moving = 0;
  const double wsum = o.revoluteWeight + o.prismaticWeight + o.sphericalWeight + o.planarWeight;
  int counter = 0;
  while (moving < o.nbodies) {
    SpecLink l;
    ++counter;
    l.name = "link_" + std::to_string(counter);
    l.jointName = "joint_" + std::to_string(counter);
    // Parent: the previous link, or (branching) one of its ancestors.
    int parentPos = static_cast<int>(path.size()) - 1;
    const int minPos = o.floatingBase && moving > 0 ? 1 : 0;  // keep everything below the base
    if (parentPos > minPos && uniform(rng, 0, 1) < o.branchProbability)
      parentPos = std::uniform_int_distribution<int>(minPos, parentPos - 1)(rng);
    l.parent = path[parentPos];
    path.resize(parentPos + 1);

    const bool isBase = o.floatingBase && moving == 0;
    if (isBase) {
      l.jointType = "floating";
    } else if (uniform(rng, 0, 1) < o.fixedLinkProbability) {
      l.jointType = "fixed";
    } else {
      double r = uniform(rng, 0, wsum);
      if ((r -= o.revoluteWeight) < 0)
        l.jointType = uniform(rng, 0, 1) < o.limitProbability ? "revolute" : "continuous";
      else if ((r -= o.prismaticWeight) < 0)
        l.jointType = "prismatic";
      else if ((r -= o.sphericalWeight) < 0)
        l.jointType = "spherical";
      else
        l.jointType = "planar";
    }
    // Origin: sometimes omitted (defaults), usually random.
    l.writeXyz = uniform(rng, 0, 1) < 0.9;
    l.writeRpy = uniform(rng, 0, 1) < 0.8;
    if (l.writeXyz) l.xyz = uniformVec3(rng, o.placementScale);
    if (l.writeRpy) l.rpy = uniformVec3(rng, kPi);
    if (l.jointType == "revolute" || l.jointType == "continuous" || l.jointType == "prismatic" ||
        l.jointType == "planar") {
      l.writeAxis = true;
      if (uniform(rng, 0, 1) < 0.25) {
        const int k = std::uniform_int_distribution<int>(0, 2)(rng);
        l.axis = Vec3::Unit(k) * (uniform(rng, 0, 1) < 0.5 ? -1.0 : 1.0);
      } else {
        l.axis = randomUnitVector(rng);
      }
    }
    if (l.jointType == "revolute" ||
        (l.jointType == "prismatic" && uniform(rng, 0, 1) < o.limitProbability)) {
      l.hasLimit = true;
      l.lower = uniform(rng, -3.0, -0.3);
      l.upper = uniform(rng, 0.3, 3.0);
      l.effort = uniform(rng, 0, 1) < 0.8 ? uniform(rng, 1.0, 100.0) : 0.0;
      l.velocity = uniform(rng, 0, 1) < 0.8 ? uniform(rng, 1.0, 30.0) : 0.0;
    }
    // Inertia: always for moving links; most fused links carry mass too.
    l.hasInertial = l.jointType != "fixed" || uniform(rng, 0, 1) < 0.7;
    if (l.hasInertial) {
      l.mass = uniform(rng, 0.2, 3.0);
      l.com = uniformVec3(rng, 0.2);
      l.comRpy = uniform(rng, 0, 1) < 0.5 ? uniformVec3(rng, kPi) : Vec3::Zero();
      const Vec3 d(uniform(rng, 0.005, 0.05), uniform(rng, 0.005, 0.05),
                   uniform(rng, 0.005, 0.05));  // second moments of the mass distribution
      const Vec3 principal(l.mass * (d.y() + d.z()), l.mass * (d.x() + d.z()),
                           l.mass * (d.x() + d.y()));
      const Mat3 Q = randomRotation(rng);
      l.inertia = Q * principal.asDiagonal() * Q.transpose();
      l.inertia = 0.5 * (l.inertia + l.inertia.transpose()).eval();
    }
    if (l.jointType != "fixed") ++moving;
    links.push_back(l);
    path.push_back(static_cast<int>(links.size()) - 1);
  }
  return links;
}

Joint specJoint(const SpecLink& l) {
  if (l.jointType == "revolute" || l.jointType == "continuous") return Joint::revolute(l.axis);
  if (l.jointType == "prismatic") return Joint::prismatic(l.axis);
  if (l.jointType == "spherical") return Joint::spherical();
  if (l.jointType == "planar") return Joint::planar(l.axis);
  if (l.jointType == "floating") return Joint::floating();
  return Joint::fixed();
}

/// The model of the spec, built directly (fused links combined by the parallel-axis theorem).
Model specModel(const std::vector<SpecLink>& links, const RandomModelOptions& o) {
  Model m;
  m.name = o.robotName;
  m.rootLink = links[0].name;
  const int n = static_cast<int>(links.size());
  std::vector<int> linkBody(n, -1);
  std::vector<Transform> linkPlacement(n);
  std::vector<double> lower, upper, vel, eff;
  for (int k = 1; k < n; ++k) {
    const SpecLink& l = links[k];
    const Transform placement = linkPlacement[l.parent] * Transform(rpyMatrix(l.rpy), l.xyz);
    if (l.jointType == "fixed") {
      linkBody[k] = linkBody[l.parent];
      linkPlacement[k] = placement;
      continue;
    }
    const Joint joint = specJoint(l);
    m.parent.push_back(linkBody[l.parent]);
    m.joints.push_back(joint);
    m.jointPlacement.push_back(placement);
    m.inertias.push_back(SpatialInertia());
    m.bodyNames.push_back(l.name);
    m.jointNames.push_back(l.jointName);
    linkBody[k] = static_cast<int>(m.parent.size()) - 1;
    linkPlacement[k] = Transform();
    const bool limited = l.hasLimit && l.jointType != "continuous";
    for (int i = 0; i < joint.nq; ++i) {
      lower.push_back(limited ? l.lower : -kInf);
      upper.push_back(limited ? l.upper : kInf);
    }
    for (int i = 0; i < joint.nv; ++i) {
      vel.push_back(l.hasLimit && l.velocity > 0 ? l.velocity : kInf);
      eff.push_back(l.hasLimit && l.effort > 0 ? l.effort : kInf);
    }
  }
  for (int k = 0; k < n; ++k) {
    const SpecLink& l = links[k];
    const int b = linkBody[k];
    if (b >= 0 && l.hasInertial) {
      // Link inertia in body coordinates: COM and rotational inertia moved into the body frame.
      const Transform& X = linkPlacement[k];
      const Mat3 Rin = X.R * rpyMatrix(l.comRpy);
      m.inertias[b] =
          m.inertias[b] + SpatialInertia::fromMassComInertia(l.mass, X.R * l.com + X.p,
                                                             Rin * l.inertia * Rin.transpose());
    }
    Frame f;
    f.name = l.name;
    f.body = b;
    f.placement = linkPlacement[k];
    f.isBody = b >= 0 && m.bodyNames[b] == l.name;
    m.frames.push_back(f);
  }
  m.lowerPositionLimit = Eigen::Map<VecX>(lower.data(), lower.size());
  m.upperPositionLimit = Eigen::Map<VecX>(upper.data(), upper.size());
  m.velocityLimit = Eigen::Map<VecX>(vel.data(), vel.size());
  m.effortLimit = Eigen::Map<VecX>(eff.data(), eff.size());
  m.finalize();
  return m;
}

std::string specUrdf(const std::vector<SpecLink>& links, const RandomModelOptions& o) {
  std::ostringstream os;
  os << "<?xml version=\"1.0\"?>\n<robot name=\"" << o.robotName << "\">\n";
  for (size_t k = 0; k < links.size(); ++k) {
    const SpecLink& l = links[k];
    if (!l.hasInertial) {
      os << "  <link name=\"" << l.name << "\"/>\n";
    } else {
      const Mat3& I = l.inertia;
      os << "  <link name=\"" << l.name << "\">\n    <inertial>\n"
         << "      <origin xyz=\"" << vec(l.com) << "\" rpy=\"" << vec(l.comRpy) << "\"/>\n"
         << "      <mass value=\"" << num(l.mass) << "\"/>\n"
         << "      <inertia ixx=\"" << num(I(0, 0)) << "\" ixy=\"" << num(I(0, 1)) << "\" ixz=\""
         << num(I(0, 2)) << "\" iyy=\"" << num(I(1, 1)) << "\" iyz=\"" << num(I(1, 2))
         << "\" izz=\"" << num(I(2, 2)) << "\"/>\n    </inertial>\n  </link>\n";
    }
    if (k == 0) continue;
    os << "  <joint name=\"" << l.jointName << "\" type=\"" << l.jointType << "\">\n"
       << "    <parent link=\"" << links[l.parent].name << "\"/>\n"
       << "    <child link=\"" << l.name << "\"/>\n";
    if (l.writeXyz || l.writeRpy) {
      os << "    <origin";
      if (l.writeXyz) os << " xyz=\"" << vec(l.xyz) << "\"";
      if (l.writeRpy) os << " rpy=\"" << vec(l.rpy) << "\"";
      os << "/>\n";
    }
    if (l.writeAxis) os << "    <axis xyz=\"" << vec(l.axis) << "\"/>\n";
    if (l.hasLimit) {
      os << "    <limit lower=\"" << num(l.lower) << "\" upper=\"" << num(l.upper) << "\"";
      if (l.effort > 0) os << " effort=\"" << num(l.effort) << "\"";
      if (l.velocity > 0) os << " velocity=\"" << num(l.velocity) << "\"";
      os << "/>\n";
    }
    os << "  </joint>\n";
  }
  os << "</robot>\n";
  return os.str();
}

bool sameLimit(double a, double b, double tol) {
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= tol * std::max(1.0, std::abs(a));
}

}  // namespace

Mat3 randomRotation(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::Quaterniond q(n(rng), n(rng), n(rng), n(rng));
  q.normalize();
  return q.toRotationMatrix();
}

Vec3 randomUnitVector(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec3 v;
  do {
    v = Vec3(n(rng), n(rng), n(rng));
  } while (v.norm() < 1e-3);
  return v.normalized();
}

SpatialInertia randomInertia(std::mt19937_64& rng, double mmin, double mmax) {
  const double m = uniform(rng, mmin, mmax);
  const Vec3 d(uniform(rng, 0.005, 0.05), uniform(rng, 0.005, 0.05), uniform(rng, 0.005, 0.05));
  const Vec3 principal(m * (d.y() + d.z()), m * (d.x() + d.z()), m * (d.x() + d.y()));
  const Mat3 Q = randomRotation(rng);
  const Mat3 Ic = Q * principal.asDiagonal() * Q.transpose();
  return SpatialInertia::fromMassComInertia(m, uniformVec3(rng, 0.2), 0.5 * (Ic + Ic.transpose()));
}

RandomRobot randomRobot(std::mt19937_64& rng, const RandomModelOptions& options) {
  const std::vector<SpecLink> spec = randomSpec(rng, options);
  return RandomRobot{specModel(spec, options), specUrdf(spec, options)};
}

Model randomTreeModel(std::mt19937_64& rng, const RandomModelOptions& options) {
  return randomRobot(rng, options).model;
}

std::string randomUrdfString(std::mt19937_64& rng, const RandomModelOptions& options,
                             Model* equivalent) {
  RandomRobot r = randomRobot(rng, options);
  if (equivalent) *equivalent = std::move(r.model);
  return r.urdf;
}

::testing::AssertionResult modelsEquivalent(const Model& a, const Model& b, double tol) {
  auto fail = [](const std::string& what) { return ::testing::AssertionFailure() << what; };
  auto close = [tol](const MatX& x, const MatX& y) {
    return x.rows() == y.rows() && x.cols() == y.cols() &&
           (x.size() == 0 ||
            (x - y).cwiseAbs().maxCoeff() <= tol * std::max(1.0, x.cwiseAbs().maxCoeff()));
  };
  if (a.name != b.name) return fail("name '" + a.name + "' vs '" + b.name + "'");
  if (a.rootLink != b.rootLink)
    return fail("rootLink '" + a.rootLink + "' vs '" + b.rootLink + "'");
  if (a.nbodies != b.nbodies || a.nq != b.nq || a.nv != b.nv)
    return fail("sizes (nbodies, nq, nv) differ: (" + std::to_string(a.nbodies) + ", " +
                std::to_string(a.nq) + ", " + std::to_string(a.nv) + ") vs (" +
                std::to_string(b.nbodies) + ", " + std::to_string(b.nq) + ", " +
                std::to_string(b.nv) + ")");
  for (int i = 0; i < a.nbodies; ++i) {
    const std::string at = " of body " + std::to_string(i) + " ('" + a.bodyNames[i] + "')";
    if (a.parent[i] != b.parent[i]) return fail("parent" + at);
    if (a.bodyNames[i] != b.bodyNames[i]) return fail("body name" + at);
    if (a.jointNames[i] != b.jointNames[i]) return fail("joint name" + at);
    const Joint &ja = a.joints[i], &jb = b.joints[i];
    if (ja.type != jb.type) return fail("joint type" + at);
    if (!close(ja.axis, jb.axis) || !close(ja.t1, jb.t1) || !close(ja.t2, jb.t2) ||
        !close(ja.S, jb.S))
      return fail("joint axis / motion subspace" + at);
    if (a.idx_q[i] != b.idx_q[i] || a.idx_v[i] != b.idx_v[i]) return fail("indices" + at);
    if (!close(a.jointPlacement[i].R, b.jointPlacement[i].R) ||
        !close(a.jointPlacement[i].p, b.jointPlacement[i].p))
      return fail("joint placement" + at);
    const SpatialInertia &Ia = a.inertias[i], &Ib = b.inertias[i];
    if (!close(Ia.matrix(), Ib.matrix()))
      return ::testing::AssertionFailure() << "inertia" << at << ":\n"
                                           << Ia.matrix() << "\nvs\n"
                                           << Ib.matrix();
  }
  if (a.frames.size() != b.frames.size()) return fail("number of frames");
  for (size_t k = 0; k < a.frames.size(); ++k) {
    const Frame &fa = a.frames[k], &fb = b.frames[k];
    const std::string at = " of frame " + std::to_string(k) + " ('" + fa.name + "')";
    if (fa.name != fb.name || fa.body != fb.body || fa.isBody != fb.isBody)
      return fail("name/body/isBody" + at);
    if (!close(fa.placement.R, fb.placement.R) || !close(fa.placement.p, fb.placement.p))
      return fail("placement" + at);
  }
  for (int k = 0; k < a.nq; ++k)
    if (!sameLimit(a.lowerPositionLimit[k], b.lowerPositionLimit[k], tol) ||
        !sameLimit(a.upperPositionLimit[k], b.upperPositionLimit[k], tol))
      return fail("position limit " + std::to_string(k));
  for (int k = 0; k < a.nv; ++k)
    if (!sameLimit(a.velocityLimit[k], b.velocityLimit[k], tol) ||
        !sameLimit(a.effortLimit[k], b.effortLimit[k], tol))
      return fail("velocity/effort limit " + std::to_string(k));
  if (a.positionNames != b.positionNames || a.velocityNames != b.velocityNames)
    return fail("coordinate names");
  return ::testing::AssertionSuccess();
}

VecX randomVector(Eigen::Index n, std::mt19937_64& rng, double lo, double hi) {
  VecX x(n);
  for (Eigen::Index i = 0; i < n; ++i) x[i] = uniform(rng, lo, hi);
  return x;
}

VecX byName(const std::vector<std::string>& from, const VecX& x,
            const std::vector<std::string>& to) {
  VecX out = VecX::Zero(static_cast<Eigen::Index>(to.size()));
  for (size_t i = 0; i < to.size(); ++i)
    for (size_t j = 0; j < from.size(); ++j)
      if (from[j] == to[i]) out[i] = x[j];
  return out;
}

RandomState randomState(const Model& model, std::mt19937_64& rng, double range) {
  RandomState s;
  s.q = randomConfiguration(model, rng, range);
  s.v = randomVector(model.nv, rng, -range, range);
  s.a = randomVector(model.nv, rng, -range, range);
  s.tau = randomVector(model.nv, rng, -range, range);
  return s;
}

std::vector<Force> randomForces(const Model& model, std::mt19937_64& rng, double scale) {
  std::vector<Force> f(model.nbodies);
  for (auto& x : f) x = randomVector(6, rng, -scale, scale);
  return f;
}

double relativeError(const MatX& a, const MatX& b, double floor) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return std::numeric_limits<double>::infinity();
  if (a.size() == 0) return 0.0;
  const double diff = (a - b).cwiseAbs().maxCoeff();
  const double scale = std::max({floor, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  if (!std::isfinite(diff)) return std::numeric_limits<double>::infinity();
  return diff / scale;
}

::testing::AssertionResult isClose(const MatX& actual, const MatX& expected, double tol,
                                   double floor) {
  const double e = relativeError(actual, expected, floor);
  if (e <= tol) return ::testing::AssertionSuccess();
  Eigen::IOFormat fmt(Eigen::FullPrecision, 0, ", ", "\n", "[", "]");
  auto r = ::testing::AssertionFailure();
  r << "relative error " << e << " > " << tol << " (sizes " << actual.rows() << "x" << actual.cols()
    << " vs " << expected.rows() << "x" << expected.cols() << ")";
  if (actual.size() <= 400 && expected.size() <= 400)
    r << "\nactual:\n" << actual.format(fmt) << "\nexpected:\n" << expected.format(fmt);
  return r;
}

::testing::AssertionResult isCloseScalar(double actual, double expected, double tol, double floor) {
  const double scale = std::max({floor, std::abs(actual), std::abs(expected)});
  const double e = std::abs(actual - expected) / scale;
  if (e <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << actual << " vs expected " << expected
                                       << ": relative error " << e << " > " << tol;
}

int bodyFrameId(const Model& model, int body) {
  for (size_t k = 0; k < model.frames.size(); ++k)
    if (model.frames[k].body == body && model.frames[k].isBody) return static_cast<int>(k);
  return -1;
}

Vec3 rotationLog(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

std::string sharedDir() { return CLUSTERDYN_SHARED_DIR; }

const char* modelsDir() { return CLUSTERDYN_TEST_MODELS_DIR; }

const char* sourceDir() { return CLUSTERDYN_TEST_SOURCE_DIR; }

std::string sharedPath(const std::string& relative) {
  return std::string(CLUSTERDYN_SHARED_DIR) + "/" + relative;
}

std::string modelsPath(const std::string& relative) {
  return std::string(CLUSTERDYN_TEST_MODELS_DIR) + "/" + relative;
}

std::vector<std::string> sharedTreeModelFiles() {
  std::vector<std::string> files;
  namespace fs = std::filesystem;
  const fs::path dir = sharedPath("urdfplus");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = "_approximate.urdf";
    if (name == "double_pendulum.urdf" ||
        (name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0))
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> bundledTreeModelFiles() {
  std::vector<std::string> files;
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(CLUSTERDYN_TEST_MODELS_DIR, ec)) {
    if (e.path().extension() != ".urdf") continue;
    const std::string text = readTextFile(e.path().string());
    if (text.find("<loop") == std::string::npos && text.find("<coupling") == std::string::npos &&
        text.find("<mimic") == std::string::npos)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string writeTempFile(const std::string& name, const std::string& text) {
  const std::string path =
      ::testing::TempDir() + "clusterdyn_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

std::string readTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace clusterdyn::test
