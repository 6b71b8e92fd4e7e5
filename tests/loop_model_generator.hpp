// Random URDF+ mechanisms with kinematic loops for the cluster-tree tests.
//
// generateLoopModel() writes a random tree (fixed base, or a floating base attached to a massless
// root link by a type="floating" joint) that carries random sub-mechanisms:
//  * Gear: a link and its rotor on the same parent, <coupling> ratio in [2, 20];
//  * Belt: knee + ankle with both rotors on the knee's parent, r2 (q_knee + q_ankle) = q_rotor;
//  * Differential: two rotors, two outputs in series, one coupling per output with two
//    <predecessor ratio=".."> terms (outputs or rotors independent, chosen at random);
//  * Mimic / MimicChain: standard URDF <mimic> (a chain f2 -> f1 -> leader for MimicChain);
//  * CrankRocker, Parallelogram, SliderCrank: planar four-bars closed by an implicit
//    <loop type="revolute">, in a random plane, with random joint-frame orientations and axis
//    signs. The loop frames are placed where the two chains meet at a chosen configuration q*
//    with non-zero joint values, so q = 0 is NOT closed (the builder has to search);
//  * FourBarMotor: a crank-rocker whose crank is driven by a geared motor on the ground (merge);
//  * FourBarRotorOnCrank: nested loops, a rotor on the crank drives the coupler joint (merge);
//  * FourBarRotorOnCoupler: a rotor carried by the coupler, geared to the rocker (merge);
//  * FourBarGearOnCoupler: a link + rotor pair carried by the coupler (a child cluster);
//  * ParallelFourBars: two four-bars sharing their crank (two loops, one cluster);
//  * SerialFourBar: a serial chain crank -> coupler -> rocker pinned back onto the link it
//    hangs from (the world itself for a fixed base) by the loop joint;
//  * PrismaticLoopSlider: crank -> rod -> block (all revolute) whose block slides on the mount
//    through a <loop type="prismatic"> (a prismatic cut joint).
// Every inertia is physically valid (positive masses, principal moments from boxes, random
// axes); rotors may be massless. Tree joints get random unit axes of either sign.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace clusterdyn::testgen {

using GVec3 = Eigen::Vector3d;
using GMat3 = Eigen::Matrix3d;

enum class MechanismKind {
  Gear,
  Belt,
  Differential,
  Mimic,
  MimicChain,
  CrankRocker,
  Parallelogram,
  SliderCrank,
  FourBarMotor,
  FourBarRotorOnCrank,
  FourBarRotorOnCoupler,
  FourBarGearOnCoupler,
  ParallelFourBars,
  SerialFourBar,
  PrismaticLoopSlider,
};

inline const char* mechanismName(MechanismKind k) {
  switch (k) {
    case MechanismKind::Gear:
      return "gear";
    case MechanismKind::Belt:
      return "belt";
    case MechanismKind::Differential:
      return "differential";
    case MechanismKind::Mimic:
      return "mimic";
    case MechanismKind::MimicChain:
      return "mimic_chain";
    case MechanismKind::CrankRocker:
      return "crank_rocker";
    case MechanismKind::Parallelogram:
      return "parallelogram";
    case MechanismKind::SliderCrank:
      return "slider_crank";
    case MechanismKind::FourBarMotor:
      return "four_bar_motor";
    case MechanismKind::FourBarRotorOnCrank:
      return "four_bar_rotor_on_crank";
    case MechanismKind::FourBarRotorOnCoupler:
      return "four_bar_rotor_on_coupler";
    case MechanismKind::FourBarGearOnCoupler:
      return "four_bar_gear_on_coupler";
    case MechanismKind::ParallelFourBars:
      return "parallel_four_bars";
    case MechanismKind::SerialFourBar:
      return "serial_four_bar";
    case MechanismKind::PrismaticLoopSlider:
      return "prismatic_loop_slider";
  }
  return "?";
}

inline std::vector<MechanismKind> allMechanismKinds() {
  return {MechanismKind::Gear,
          MechanismKind::Belt,
          MechanismKind::Differential,
          MechanismKind::Mimic,
          MechanismKind::MimicChain,
          MechanismKind::CrankRocker,
          MechanismKind::Parallelogram,
          MechanismKind::SliderCrank,
          MechanismKind::FourBarMotor,
          MechanismKind::FourBarRotorOnCrank,
          MechanismKind::FourBarRotorOnCoupler,
          MechanismKind::FourBarGearOnCoupler,
          MechanismKind::ParallelFourBars,
          MechanismKind::SerialFourBar,
          MechanismKind::PrismaticLoopSlider};
}

inline bool isImplicitKind(MechanismKind k) {
  return k == MechanismKind::CrankRocker || k == MechanismKind::Parallelogram ||
         k == MechanismKind::SliderCrank || k == MechanismKind::FourBarMotor ||
         k == MechanismKind::FourBarRotorOnCrank || k == MechanismKind::FourBarRotorOnCoupler ||
         k == MechanismKind::FourBarGearOnCoupler || k == MechanismKind::ParallelFourBars ||
         k == MechanismKind::SerialFourBar || k == MechanismKind::PrismaticLoopSlider;
}

struct GeneratorOptions {
  bool floatingBase = false;
  int treeLinks = 3;                 ///< plain tree links (not counting the floating base)
  int mechanisms = 3;                ///< sub-mechanisms
  std::vector<MechanismKind> kinds;  ///< allowed kinds (empty: all)
  bool multiDofTreeJoints = true;    ///< spherical / planar joints in the tree part
  double prismaticProbability = 0.2;
  double fixedLinkProbability = 0.25;  ///< fused links (tools; loop/coupling links on them)
  bool shuffleElements = true;         ///< random order of <link>/<joint> elements in the file
  /// SerialFourBar: name the link the chain hangs from as the loop's <successor> (instead of
  /// its <predecessor>).
  bool mountAsLoopSuccessor = false;
  std::string robotName = "generated_robot";
};

/// A constrained cluster the generator expects the builder to produce.
struct ExpectedCluster {
  std::string kind;
  std::set<std::string> links;  ///< links of the moving bodies of the cluster
  int dof = 0;
  bool implicit = false;
  std::string outputLink;  ///< link of the output body ("" = the fixed world)
};

struct GeneratedRobot {
  std::string urdf;
  std::string name;
  bool floatingBase = false;
  bool singleDofTree = true;  ///< no spherical / planar joints anywhere
  int spanningNv = 0;         ///< expected ClusterModel::treeModel.nv
  int independentNv = 0;      ///< expected ClusterModel::ny
  std::vector<ExpectedCluster> clusters;
  std::vector<MechanismKind> kinds;
  std::string describe() const {
    std::string s = name + (floatingBase ? " (floating)" : " (fixed)") + ":";
    for (auto k : kinds) s += std::string(" ") + mechanismName(k);
    return s;
  }
};

namespace detail {

constexpr double kPi = 3.14159265358979323846;

inline double uni(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
inline int uniInt(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
inline double sign(std::mt19937_64& rng) { return uni(rng, 0, 1) < 0.5 ? -1.0 : 1.0; }
/// Uniform magnitude in [lo, hi] with a random sign.
inline double signedUni(std::mt19937_64& rng, double lo, double hi) {
  return sign(rng) * uni(rng, lo, hi);
}
inline GVec3 uniVec(std::mt19937_64& rng, double s) {
  return GVec3(uni(rng, -s, s), uni(rng, -s, s), uni(rng, -s, s));
}
inline GVec3 unitVec(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0, 1);
  for (;;) {
    GVec3 v(n(rng), n(rng), n(rng));
    if (v.norm() > 1e-3) return v.normalized();
  }
}
inline GMat3 randomRot(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0, 1);
  Eigen::Quaterniond q(n(rng), n(rng), n(rng), n(rng));
  q.normalize();
  return q.toRotationMatrix();
}
inline GMat3 rotZ(double a) { return Eigen::AngleAxisd(a, GVec3::UnitZ()).toRotationMatrix(); }

/// URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll).
inline GMat3 rpyToMatrix(const GVec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), GVec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), GVec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), GVec3::UnitX()))
      .toRotationMatrix();
}
/// rpy of R; *err receives the round-trip error max|R - R(rpy)|.
inline GVec3 matrixToRpy(const GMat3& R, double* err) {
  const double sp = std::max(-1.0, std::min(1.0, -R(2, 0)));
  const double pitch = std::asin(sp);
  double roll, yaw;
  if (std::abs(std::cos(pitch)) > 1e-6) {
    roll = std::atan2(R(2, 1), R(2, 2));
    yaw = std::atan2(R(1, 0), R(0, 0));
  } else {
    roll = 0.0;
    yaw = std::atan2(-R(0, 1), R(1, 1));
  }
  const GVec3 rpy(roll, pitch, yaw);
  if (err) *err = (rpyToMatrix(rpy) - R).cwiseAbs().maxCoeff();
  return rpy;
}

struct Pose {
  GMat3 R = GMat3::Identity();
  GVec3 p = GVec3::Zero();
  Pose() = default;
  Pose(const GMat3& r, const GVec3& t) : R(r), p(t) {}
  Pose operator*(const Pose& o) const { return Pose(R * o.R, p + R * o.p); }
  Pose inverse() const { return Pose(R.transpose(), -R.transpose() * p); }
  GVec3 act(const GVec3& x) const { return R * x + p; }
};

inline std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}
inline std::string vec(const GVec3& v) { return num(v.x()) + " " + num(v.y()) + " " + num(v.z()); }

struct LinkSpec {
  std::string name;
  bool hasInertial = false;
  double mass = 0;
  GVec3 com = GVec3::Zero(), comRpy = GVec3::Zero();
  GMat3 I = GMat3::Zero();  // about the COM, inertial-frame axes
};

struct JointSpec {
  std::string name, type, parent, child;
  Pose origin;
  GVec3 axis = GVec3::UnitX();
  bool writeAxis = false;
  std::string independent;  // "", "true", "false"
  std::string mimicJoint;
  double mimicMultiplier = 1.0, mimicOffset = 0.0;
  bool hasLimit = false;
};

struct CouplingSpec {
  std::string name;
  std::vector<std::pair<std::string, double>> predecessors;
  std::string successor;
  bool ratioElement = false;  // single predecessor: <ratio value=..> instead of the attribute
};

struct LoopSpec {
  std::string name, type, predecessor, successor;
  Pose predOrigin, succOrigin;
  GVec3 axis = GVec3::UnitZ();
};

class Writer {
 public:
  std::mt19937_64& rng;
  std::vector<LinkSpec> links;
  std::vector<JointSpec> joints;
  std::vector<CouplingSpec> couplings;
  std::vector<LoopSpec> loops;
  bool precisionOk = true;
  int fusedCounter = 0;

  explicit Writer(std::mt19937_64& r) : rng(r) {}

  /// Box-like random inertia (triangle inequality holds), random principal axes.
  void randomInertia(LinkSpec& l, double mmin, double mmax) {
    l.hasInertial = true;
    l.mass = uni(rng, mmin, mmax);
    const double a = uni(rng, 0.05, 0.4), b = uni(rng, 0.05, 0.4), c = uni(rng, 0.05, 0.4);
    const GVec3 d(l.mass / 12 * (b * b + c * c), l.mass / 12 * (a * a + c * c),
                  l.mass / 12 * (a * a + b * b));
    l.com = uniVec(rng, 0.15);
    if (uni(rng, 0, 1) < 0.5) {  // principal axes through the inertial origin's rpy
      l.comRpy = uniVec(rng, kPi);
      l.I = d.asDiagonal();
    } else {  // full tensor, inertial frame aligned with the link
      const GMat3 Q = randomRot(rng);
      l.I = Q * d.asDiagonal() * Q.transpose();
      l.I = 0.5 * (l.I + l.I.transpose()).eval();
    }
  }
  /// Rotor: disc (axial J, transverse J*(0.5..0.9)), mass 0 half of the time.
  void rotorInertia(LinkSpec& l) {
    l.hasInertial = true;
    l.mass = uni(rng, 0, 1) < 0.5 ? 0.0 : uni(rng, 0.05, 0.3);
    const double J = uni(rng, 1e-4, 1e-3), t = J * uni(rng, 0.5, 0.9);
    l.com = l.mass > 0 ? uniVec(rng, 0.02) : GVec3::Zero();
    l.comRpy = uniVec(rng, kPi);
    l.I = GVec3(t, t, J).asDiagonal();
  }
  std::string addLink(const std::string& name, bool rotor = false, bool massless = false) {
    LinkSpec l;
    l.name = name;
    if (rotor)
      rotorInertia(l);
    else if (!massless)
      randomInertia(l, 0.2, 2.0);
    links.push_back(l);
    return name;
  }
  JointSpec& addJoint(const std::string& name, const std::string& type, const std::string& parent,
                      const std::string& child, const Pose& origin, const GVec3& axis) {
    JointSpec j;
    j.name = name;
    j.type = type;
    j.parent = parent;
    j.child = child;
    j.origin = origin;
    j.axis = axis.normalized();
    j.writeAxis = type != "fixed" && type != "floating" && type != "spherical";
    j.hasLimit = (type == "revolute" || type == "prismatic");
    joints.push_back(j);
    return joints.back();
  }
  Pose randomPose(double s) { return Pose(randomRot(rng), uniVec(rng, s)); }

  std::string write(const std::string& robotName, bool shuffle) {
    std::vector<std::string> elems;
    for (const auto& l : links) {
      std::ostringstream os;
      os << "  <link name=\"" << l.name << "\">\n";
      if (l.hasInertial) {
        os << "    <inertial>\n      <origin xyz=\"" << vec(l.com) << "\" rpy=\"" << vec(l.comRpy)
           << "\"/>\n      <mass value=\"" << num(l.mass) << "\"/>\n      <inertia ixx=\""
           << num(l.I(0, 0)) << "\" ixy=\"" << num(l.I(0, 1)) << "\" ixz=\"" << num(l.I(0, 2))
           << "\" iyy=\"" << num(l.I(1, 1)) << "\" iyz=\"" << num(l.I(1, 2)) << "\" izz=\""
           << num(l.I(2, 2)) << "\"/>\n    </inertial>\n";
      }
      os << "  </link>\n";
      elems.push_back(os.str());
    }
    for (const auto& j : joints) {
      std::ostringstream os;
      double err = 0;
      const GVec3 rpy = matrixToRpy(j.origin.R, &err);
      if (err > 2e-15) precisionOk = false;
      os << "  <joint name=\"" << j.name << "\" type=\"" << j.type << "\"";
      if (!j.independent.empty()) os << " independent=\"" << j.independent << "\"";
      os << ">\n    <parent link=\"" << j.parent << "\"/>\n    <child link=\"" << j.child
         << "\"/>\n    <origin xyz=\"" << vec(j.origin.p) << "\" rpy=\"" << vec(rpy) << "\"/>\n";
      if (j.writeAxis) os << "    <axis xyz=\"" << vec(j.axis) << "\"/>\n";
      if (j.hasLimit) {
        if (j.type == "prismatic")
          os << "    <limit lower=\"-5\" upper=\"5\" effort=\"100\" velocity=\"10\"/>\n";
        else
          os << "    <limit lower=\"-12\" upper=\"12\" effort=\"100\" velocity=\"10\"/>\n";
      }
      if (!j.mimicJoint.empty())
        os << "    <mimic joint=\"" << j.mimicJoint << "\" multiplier=\"" << num(j.mimicMultiplier)
           << "\" offset=\"" << num(j.mimicOffset) << "\"/>\n";
      os << "  </joint>\n";
      elems.push_back(os.str());
    }
    if (shuffle) std::shuffle(elems.begin(), elems.end(), rng);
    for (const auto& c : couplings) {
      std::ostringstream os;
      os << "  <coupling name=\"" << c.name << "\">\n";
      for (const auto& [link, r] : c.predecessors) {
        if (c.ratioElement)
          os << "    <predecessor link=\"" << link << "\"/>\n";
        else
          os << "    <predecessor link=\"" << link << "\" ratio=\"" << num(r) << "\"/>\n";
      }
      os << "    <successor link=\"" << c.successor << "\"/>\n";
      if (c.ratioElement) os << "    <ratio value=\"" << num(c.predecessors[0].second) << "\"/>\n";
      os << "  </coupling>\n";
      elems.push_back(os.str());
    }
    for (const auto& l : loops) {
      std::ostringstream os;
      double e1 = 0, e2 = 0;
      const GVec3 r1 = matrixToRpy(l.predOrigin.R, &e1), r2 = matrixToRpy(l.succOrigin.R, &e2);
      if (std::max(e1, e2) > 2e-15) precisionOk = false;
      os << "  <loop name=\"" << l.name << "\" type=\"" << l.type << "\">\n"
         << "    <predecessor link=\"" << l.predecessor << "\">\n      <origin xyz=\""
         << vec(l.predOrigin.p) << "\" rpy=\"" << vec(r1) << "\"/>\n    </predecessor>\n"
         << "    <successor link=\"" << l.successor << "\">\n      <origin xyz=\""
         << vec(l.succOrigin.p) << "\" rpy=\"" << vec(r2) << "\"/>\n    </successor>\n"
         << "    <axis xyz=\"" << vec(l.axis) << "\"/>\n  </loop>\n";
      elems.push_back(os.str());
    }
    std::string s = "<?xml version=\"1.0\"?>\n<robot name=\"" + robotName + "\">\n";
    for (const auto& e : elems) s += e;
    s += "</robot>\n";
    return s;
  }
};

/// Builds one mechanism hanging from `mount`; returns the links new things may hang from.
class MechanismBuilder {
 public:
  Writer& w;
  std::mt19937_64& rng;
  std::string prefix;
  std::string mount;
  std::vector<std::string> newMounts;
  std::vector<ExpectedCluster> clusters;
  int spanningNv = 0;
  bool mountAsLoopSuccessor = false;

  MechanismBuilder(Writer& wr, const std::string& pre, const std::string& mountLink)
      : w(wr), rng(wr.rng), prefix(pre), mount(mountLink) {}

  std::string n(const std::string& s) const { return prefix + "_" + s; }

  /// Revolute/prismatic joint whose child frame sits at `child` (pose in the mount frame at the
  /// closing configuration) with joint value qStar there; axisP is the axis in mount coordinates.
  JointSpec& closingJoint(const std::string& name, const std::string& type,
                          const std::string& parent, const Pose& parentPose,
                          const std::string& childLink, const Pose& child, const GVec3& axisP,
                          double qStar) {
    const GVec3 aC = child.R.transpose() * axisP.normalized();
    Pose motion;
    if (type == "prismatic")
      motion.p = qStar * aC;
    else
      motion.R = Eigen::AngleAxisd(qStar, aC).toRotationMatrix();
    const Pose origin = parentPose.inverse() * child * motion.inverse();
    ++spanningNv;
    return w.addJoint(name, type, parent, childLink, origin, aC);
  }
  JointSpec& freeJoint(const std::string& name, const std::string& parent,
                       const std::string& child) {
    ++spanningNv;
    return w.addJoint(name, uni(rng, 0, 1) < 0.7 ? "revolute" : "continuous", parent, child,
                      w.randomPose(0.25), unitVec(rng));
  }
  void coupling(const std::string& name, std::vector<std::pair<std::string, double>> preds,
                const std::string& succ) {
    CouplingSpec c;
    c.name = name;
    c.predecessors = std::move(preds);
    c.successor = succ;
    c.ratioElement = c.predecessors.size() == 1 && uni(rng, 0, 1) < 0.5;
    w.couplings.push_back(c);
  }
  double ratio() { return uni(rng, 2.0, 20.0); }
  /// A link the loop/coupling may name instead of `link`: sometimes a fused (fixed) child.
  std::pair<std::string, Pose> maybeFused(const std::string& link, const Pose& pose) {
    if (uni(rng, 0, 1) >= 0.3) return {link, pose};
    const std::string f = link + "_tip" + std::to_string(++w.fusedCounter);
    w.addLink(f, false, uni(rng, 0, 1) < 0.5);
    const Pose o = w.randomPose(0.2);
    w.addJoint(f + "_fixed", "fixed", link, f, o, GVec3::UnitX());
    return {f, pose * o};
  }
  /// Implicit revolute loop between links a and b (poses at closure) meeting at point X.
  /// swap: -1 random, 0 keep (a = predecessor), 1 swap (b = predecessor).
  void loop(const std::string& name, const std::string& a, const Pose& pa, const std::string& b,
            const Pose& pb, const GVec3& X, const GVec3& normalP, int swap = -1) {
    auto [la, fa] = maybeFused(a, pa);
    auto [lb, fb] = maybeFused(b, pb);
    if (swap == 1 || (swap < 0 && uni(rng, 0, 1) < 0.5)) {
      std::swap(la, lb);
      std::swap(fa, fb);
    }
    const Pose L(randomRot(rng), X);
    LoopSpec l;
    l.name = name;
    l.type = uni(rng, 0, 1) < 0.8 ? "revolute" : "continuous";
    l.predecessor = la;
    l.successor = lb;
    l.predOrigin = fa.inverse() * L;
    l.succOrigin = fb.inverse() * L;
    l.axis = sign(rng) * (L.R.transpose() * normalP);
    w.loops.push_back(l);
  }

  // --- explicit mechanisms -------------------------------------------------------------------
  void gear() {
    const std::string L = w.addLink(n("link")), R = w.addLink(n("rotor"), true);
    JointSpec& jl = freeJoint(n("joint"), mount, L);
    if (uni(rng, 0, 1) < 0.5) jl.independent = "true";
    freeJoint(n("rotor_joint"), mount, R).independent = "false";
    coupling(n("gear"), {{maybeFused(L, Pose()).first, ratio()}}, R);
    clusters.push_back({"gear", {L, R}, 1, false, mount});
    newMounts.push_back(L);
  }
  void belt() {
    const std::string K = w.addLink(n("knee")), A = w.addLink(n("ankle"));
    const std::string KR = w.addLink(n("knee_rotor"), true), AR = w.addLink(n("ankle_rotor"), true);
    freeJoint(n("knee_joint"), mount, K);
    freeJoint(n("ankle_joint"), K, A);
    freeJoint(n("knee_rotor_joint"), mount, KR).independent = "false";
    freeJoint(n("ankle_rotor_joint"), mount, AR).independent = "false";
    coupling(n("knee_transmission"), {{K, ratio()}}, KR);
    coupling(n("ankle_transmission"), {{A, ratio()}}, AR);
    clusters.push_back({"belt", {K, A, KR, AR}, 2, false, mount});
    newMounts.push_back(A);
    newMounts.push_back(K);
  }
  void differential() {
    const std::string RA = w.addLink(n("rotor_a"), true), RB = w.addLink(n("rotor_b"), true);
    const std::string O1 = w.addLink(n("pitch")), O2 = w.addLink(n("roll"));
    const bool rotorsIndependent = uni(rng, 0, 1) < 0.4;
    const std::string rotorFlag = rotorsIndependent ? "true" : "false";
    const std::string outputFlag = rotorsIndependent ? "false" : "";
    freeJoint(n("rotor_a_joint"), mount, RA).independent = rotorFlag;
    freeJoint(n("rotor_b_joint"), mount, RB).independent = rotorFlag;
    freeJoint(n("pitch_joint"), mount, O1).independent = outputFlag;
    freeJoint(n("roll_joint"), O1, O2).independent = outputFlag;
    const double r1 = ratio(), r2 = ratio();
    coupling(n("pitch_coupling"), {{RA, 1.0 / r1}, {RB, uni(rng, 0.7, 1.3) / r1}}, O1);
    coupling(n("roll_coupling"), {{RA, 1.0 / r2}, {RB, -uni(rng, 0.7, 1.3) / r2}}, O2);
    clusters.push_back({"differential", {RA, RB, O1, O2}, 2, false, mount});
    newMounts.push_back(O2);
  }
  void mimic(bool chain) {
    const std::string L = w.addLink(n("leader")), F = w.addLink(n("follower"));
    freeJoint(n("leader_joint"), mount, L);
    JointSpec& jf = uni(rng, 0, 1) < 0.3
                        ? (++spanningNv, w.addJoint(n("follower_joint"), "prismatic", mount, F,
                                                    w.randomPose(0.2), unitVec(rng)))
                        : freeJoint(n("follower_joint"), mount, F);
    jf.mimicJoint = n("leader_joint");
    jf.mimicMultiplier = signedUni(rng, 0.3, 2.0);
    jf.mimicOffset = uni(rng, -0.3, 0.3);
    if (uni(rng, 0, 1) < 0.5) jf.independent = "false";
    ExpectedCluster c{chain ? "mimic_chain" : "mimic", {L, F}, 1, false, mount};
    if (chain) {
      const std::string F2 = w.addLink(n("follower2"));
      JointSpec& j2 = freeJoint(n("follower2_joint"), mount, F2);
      j2.mimicJoint = n("follower_joint");
      j2.mimicMultiplier = signedUni(rng, 0.3, 2.0);
      j2.mimicOffset = uni(rng, -0.3, 0.3);
      c.links.insert(F2);
    }
    clusters.push_back(c);
    newMounts.push_back(L);
  }

  // --- planar four-bars ----------------------------------------------------------------------
  Pose M;         // mechanism plane frame in the mount frame (plane z = 0)
  GVec3 normalP;  // plane normal in mount coordinates
  GVec3 inPlane(double x, double y) const { return M.act(GVec3(x, y, 0)); }
  /// Random child-frame orientation for a planar joint located at point X.
  Pose planarFrame(const GVec3& X) {
    return Pose(M.R * rotZ(uni(rng, -kPi, kPi)) * randomRot(rng), X);
  }
  double qStar() { return signedUni(rng, 0.1, 0.6); }

  struct Bar {
    std::string crank, coupler, rocker;
    Pose crankPose, couplerPose, rockerPose;
  };

  static bool circleIntersection(const Eigen::Vector2d& c1, double r1, const Eigen::Vector2d& c2,
                                 double r2, double branch, Eigen::Vector2d& out) {
    const Eigen::Vector2d d = c2 - c1;
    const double L = d.norm();
    const double a = (r1 * r1 - r2 * r2 + L * L) / (2 * L);
    const double h2 = r1 * r1 - a * a;
    if (h2 <= 0) return false;
    const Eigen::Vector2d e = d / L, perp(-e.y(), e.x());
    out = c1 + a * e + branch * std::sqrt(h2) * perp;
    return true;
  }

  /// A four-bar with ground pivots A (crank) and D (rocker) in the plane. Crank-rocker
  /// (Grashof with margins: never singular with the crank independent) or parallelogram.
  Bar fourBar(const std::string& tag, bool parallelogram, const std::string& crankLink = "",
              const Pose* crankPoseIn = nullptr, double crankAngle = 0.0,
              const Eigen::Vector2d& A = Eigen::Vector2d::Zero(), double groundAngle = 0.0) {
    Bar b;
    double a, bl, c, d;
    if (parallelogram) {
      d = uni(rng, 0.3, 0.5);
      a = c = uni(rng, 0.15, 0.3);
      bl = d;
    } else {
      for (;;) {
        d = uni(rng, 0.3, 0.5);
        a = uni(rng, 0.05, 0.12);
        bl = uni(rng, 0.2, 0.5);
        c = uni(rng, 0.2, 0.5);
        const double m = 0.05;
        if (d + a < bl + c - m && d - a > std::abs(bl - c) + m) break;
      }
    }
    const Eigen::Vector2d eg(std::cos(groundAngle), std::sin(groundAngle));
    const Eigen::Vector2d D = A + d * eg;
    // Crank direction at the closing configuration (relative to the ground line).
    const double phi = crankPoseIn
                           ? crankAngle
                           : (parallelogram ? sign(rng) * uni(rng, 1.0, 2.1) : uni(rng, -kPi, kPi));
    const Eigen::Vector2d u(std::cos(groundAngle + phi), std::sin(groundAngle + phi));
    const Eigen::Vector2d B = A + a * u;
    Eigen::Vector2d C;
    if (parallelogram) {
      C = D + a * u;
    } else {
      const bool ok = circleIntersection(B, bl, D, c, sign(rng), C);
      if (!ok) C = D + c * eg;  // cannot happen with the margins above
    }
    if (crankPoseIn) {
      b.crank = crankLink;
      b.crankPose = *crankPoseIn;
    } else {
      b.crank = w.addLink(n(tag + "crank"));
      b.crankPose = planarFrame(inPlane(A.x(), A.y()));
      // Crank qStar small for parallelograms: q = 0 must stay away from the collinear pose.
      closingJoint(n(tag + "crank_joint"), "revolute", mount, Pose(), b.crank, b.crankPose,
                   sign(rng) * normalP, parallelogram ? signedUni(rng, 0.1, 0.3) : qStar())
          .independent = uni(rng, 0, 1) < 0.5 ? "true" : "";
    }
    b.coupler = w.addLink(n(tag + "coupler"));
    b.couplerPose = planarFrame(inPlane(B.x(), B.y()));
    closingJoint(n(tag + "coupler_joint"), "revolute", b.crank, b.crankPose, b.coupler,
                 b.couplerPose, sign(rng) * normalP, qStar())
        .independent = "false";
    b.rocker = w.addLink(n(tag + "rocker"));
    b.rockerPose = planarFrame(inPlane(D.x(), D.y()));
    closingJoint(n(tag + "rocker_joint"), "revolute", mount, Pose(), b.rocker, b.rockerPose,
                 sign(rng) * normalP, qStar())
        .independent = "false";
    loop(n(tag + "loop"), b.coupler, b.couplerPose, b.rocker, b.rockerPose, inPlane(C.x(), C.y()),
         normalP);
    return b;
  }

  void startPlanar() {
    M = Pose(randomRot(rng), uniVec(rng, 0.2));
    normalP = M.R.col(2);
  }

  void crankRocker(MechanismKind kind) {
    startPlanar();
    const Bar b = fourBar("", kind == MechanismKind::Parallelogram);
    ExpectedCluster c{mechanismName(kind), {b.crank, b.coupler, b.rocker}, 1, true, mount};
    if (kind == MechanismKind::FourBarMotor) {
      const std::string R = w.addLink(n("motor"), true);
      freeJoint(n("motor_joint"), mount, R).independent = "false";
      coupling(n("motor_gear"), {{b.crank, ratio()}}, R);
      c.links.insert(R);
    } else if (kind == MechanismKind::FourBarRotorOnCrank) {
      const std::string R = w.addLink(n("coupler_rotor"), true);
      freeJoint(n("coupler_rotor_joint"), b.crank, R).independent = "false";
      coupling(n("coupler_gear"), {{b.coupler, ratio()}}, R);
      c.links.insert(R);
    } else if (kind == MechanismKind::FourBarRotorOnCoupler) {
      const std::string R = w.addLink(n("rocker_rotor"), true);
      freeJoint(n("rocker_rotor_joint"), b.coupler, R).independent = "false";
      coupling(n("rocker_gear"), {{b.rocker, ratio()}}, R);
      c.links.insert(R);
    } else if (kind == MechanismKind::FourBarGearOnCoupler) {
      const std::string L = w.addLink(n("coupler_arm")),
                        R = w.addLink(n("coupler_arm_rotor"), true);
      freeJoint(n("coupler_arm_joint"), b.coupler, L);
      freeJoint(n("coupler_arm_rotor_joint"), b.coupler, R).independent = "false";
      coupling(n("coupler_arm_gear"), {{L, ratio()}}, R);
      clusters.push_back({"gear_on_coupler", {L, R}, 1, false, b.coupler});
      newMounts.push_back(L);
    }
    clusters.push_back(c);
    newMounts.push_back(b.coupler);
    newMounts.push_back(b.rocker);
  }

  void sliderCrank() {
    startPlanar();
    const double a = uni(rng, 0.05, 0.12), h = uni(rng, -0.05, 0.05);
    const double bl = uni(rng, a + std::abs(h) + 0.1, 0.5);
    const double phi = uni(rng, -kPi, kPi);
    const Eigen::Vector2d B(a * std::cos(phi), a * std::sin(phi));
    const Eigen::Vector2d C(B.x() + std::sqrt(bl * bl - (h - B.y()) * (h - B.y())), h);
    const std::string crank = w.addLink(n("crank")), coupler = w.addLink(n("coupler")),
                      slider = w.addLink(n("slider"));
    const Pose pc = planarFrame(inPlane(0, 0));
    closingJoint(n("crank_joint"), "revolute", mount, Pose(), crank, pc, sign(rng) * normalP,
                 qStar());
    const Pose pb = planarFrame(inPlane(B.x(), B.y()));
    closingJoint(n("coupler_joint"), "revolute", crank, pc, coupler, pb, sign(rng) * normalP,
                 qStar())
        .independent = "false";
    const Pose ps(randomRot(rng), inPlane(C.x(), C.y()));
    closingJoint(n("slider_joint"), "prismatic", mount, Pose(), slider, ps,
                 sign(rng) * (M.R * GVec3::UnitX()), signedUni(rng, 0.05, 0.2))
        .independent = "false";
    loop(n("loop"), coupler, pb, slider, ps, inPlane(C.x(), C.y()), normalP);
    clusters.push_back({"slider_crank", {crank, coupler, slider}, 1, true, mount});
    newMounts.push_back(coupler);
    newMounts.push_back(slider);
  }

  void parallelFourBars() {
    startPlanar();
    const Bar b1 = fourBar("a_", false);
    // Second four-bar on the same crank: its own ground line through the crank pivot.
    const double gamma = uni(rng, 0.5, 2.5) * sign(rng);
    // The crank direction of bar 1 at closure, in the plane (from the crank's own pose).
    const GVec3 Bp = M.inverse().act(b1.couplerPose.p);
    const double crankDir = std::atan2(Bp.y(), Bp.x());
    const double phi2 = crankDir + uni(rng, -1.0, 1.0) - gamma;
    const Bar b2 =
        fourBar("b_", false, b1.crank, &b1.crankPose, phi2, Eigen::Vector2d::Zero(), gamma);
    clusters.push_back({"parallel_four_bars",
                        {b1.crank, b1.coupler, b1.rocker, b2.coupler, b2.rocker},
                        1,
                        true,
                        mount});
    newMounts.push_back(b1.coupler);
    newMounts.push_back(b2.rocker);
  }

  void serialFourBar() {
    startPlanar();
    double a, bl, c, d;
    for (;;) {
      d = uni(rng, 0.3, 0.5);
      a = uni(rng, 0.05, 0.12);
      bl = uni(rng, 0.2, 0.5);
      c = uni(rng, 0.2, 0.5);
      if (d + a < bl + c - 0.05 && d - a > std::abs(bl - c) + 0.05) break;
    }
    const double phi = uni(rng, -kPi, kPi);
    const Eigen::Vector2d B(a * std::cos(phi), a * std::sin(phi)), D(d, 0.0);
    Eigen::Vector2d C;
    if (!circleIntersection(B, bl, D, c, sign(rng), C)) C = D;
    const std::string crank = w.addLink(n("crank")), coupler = w.addLink(n("coupler")),
                      rocker = w.addLink(n("rocker"));
    const Pose pa = planarFrame(inPlane(0, 0)), pb = planarFrame(inPlane(B.x(), B.y())),
               pc = planarFrame(inPlane(C.x(), C.y()));
    closingJoint(n("crank_joint"), "revolute", mount, Pose(), crank, pa, sign(rng) * normalP,
                 qStar());
    closingJoint(n("coupler_joint"), "revolute", crank, pa, coupler, pb, sign(rng) * normalP,
                 qStar())
        .independent = "false";
    closingJoint(n("rocker_joint"), "revolute", coupler, pb, rocker, pc, sign(rng) * normalP,
                 qStar())
        .independent = "false";
    // The mount (output body, or the world) is the predecessor unless mountAsLoopSuccessor.
    loop(n("loop"), mount, Pose(), rocker, pc, inPlane(D.x(), D.y()), normalP,
         mountAsLoopSuccessor ? 1 : 0);
    clusters.push_back({"serial_four_bar", {crank, coupler, rocker}, 1, true, mount});
    newMounts.push_back(rocker);
  }

  void prismaticLoopSlider() {
    startPlanar();
    const double a = uni(rng, 0.05, 0.12), h = uni(rng, -0.05, 0.05);
    const double bl = uni(rng, a + std::abs(h) + 0.1, 0.5);
    const double phi = uni(rng, -kPi, kPi);
    const Eigen::Vector2d B(a * std::cos(phi), a * std::sin(phi));
    const Eigen::Vector2d C(B.x() + std::sqrt(bl * bl - (h - B.y()) * (h - B.y())), h);
    const std::string crank = w.addLink(n("crank")), rod = w.addLink(n("rod")),
                      block = w.addLink(n("block"));
    const Pose pa = planarFrame(inPlane(0, 0)), pb = planarFrame(inPlane(B.x(), B.y())),
               pc = planarFrame(inPlane(C.x(), C.y()));
    closingJoint(n("crank_joint"), "revolute", mount, Pose(), crank, pa, sign(rng) * normalP,
                 qStar());
    closingJoint(n("rod_joint"), "revolute", crank, pa, rod, pb, sign(rng) * normalP, qStar())
        .independent = "false";
    closingJoint(n("block_joint"), "revolute", rod, pb, block, pc, sign(rng) * normalP, qStar())
        .independent = "false";
    // Cut joint: the block slides along the in-plane direction e through C.
    auto [lm, fm] = maybeFused(mount, Pose());
    auto [lk, fk] = maybeFused(block, pc);
    const Pose L(M.R * rotZ(uni(rng, -kPi, kPi)), inPlane(C.x(), C.y()));
    const GVec3 e = M.R * GVec3::UnitX();
    const Pose Lb(L.R, L.p + uni(rng, -0.1, 0.1) * e);  // anywhere on the line
    LoopSpec l;
    l.name = n("slide");
    l.type = "prismatic";
    const bool blockFirst = uni(rng, 0, 1) < 0.5;
    l.predecessor = blockFirst ? lk : lm;
    l.successor = blockFirst ? lm : lk;
    l.predOrigin = blockFirst ? fk.inverse() * L : fm.inverse() * Lb;
    l.succOrigin = blockFirst ? fm.inverse() * Lb : fk.inverse() * L;
    l.axis = sign(rng) * (L.R.transpose() * e);
    // The mount as successor triggers the loop-to-output-body bug; keep the block as successor
    // unless mountAsLoopSuccessor.
    if (blockFirst && !mountAsLoopSuccessor) {
      std::swap(l.predecessor, l.successor);
      std::swap(l.predOrigin, l.succOrigin);
    }
    w.loops.push_back(l);
    clusters.push_back({"prismatic_loop_slider", {crank, rod, block}, 1, true, mount});
    newMounts.push_back(block);
  }

  void build(MechanismKind kind) {
    switch (kind) {
      case MechanismKind::Gear:
        gear();
        break;
      case MechanismKind::Belt:
        belt();
        break;
      case MechanismKind::Differential:
        differential();
        break;
      case MechanismKind::Mimic:
        mimic(false);
        break;
      case MechanismKind::MimicChain:
        mimic(true);
        break;
      case MechanismKind::SliderCrank:
        sliderCrank();
        break;
      case MechanismKind::ParallelFourBars:
        parallelFourBars();
        break;
      case MechanismKind::SerialFourBar:
        serialFourBar();
        break;
      case MechanismKind::PrismaticLoopSlider:
        prismaticLoopSlider();
        break;
      default:
        crankRocker(kind);
        break;
    }
  }
};

}  // namespace detail

/// A random URDF+ robot; see the file comment. Deterministic for a given rng state.
inline GeneratedRobot generateLoopModel(std::mt19937_64& rng, const GeneratorOptions& opt) {
  using namespace detail;
  for (int attempt = 0;; ++attempt) {
    Writer w(rng);
    GeneratedRobot out;
    out.name = opt.robotName;
    out.floatingBase = opt.floatingBase;
    std::vector<std::string> mounts;
    const std::string root = w.addLink(opt.floatingBase ? "world" : "base_link", false, true);
    if (opt.floatingBase) {
      const std::string base = w.addLink("base");
      w.addJoint("floating_base", "floating", root, base, w.randomPose(0.5), GVec3::UnitX());
      out.spanningNv += 6;
      out.independentNv += 6;
      mounts.push_back(base);
    } else {
      mounts.push_back(root);
    }
    const std::vector<MechanismKind> kinds = opt.kinds.empty() ? allMechanismKinds() : opt.kinds;
    std::vector<int> items;  // 0 = tree link, 1 = mechanism
    for (int i = 0; i < opt.treeLinks; ++i) items.push_back(0);
    for (int i = 0; i < opt.mechanisms; ++i) items.push_back(1);
    std::shuffle(items.begin(), items.end(), rng);
    int counter = 0;
    for (int item : items) {
      ++counter;
      const std::string mount = mounts[uniInt(rng, 0, static_cast<int>(mounts.size()) - 1)];
      if (item == 0) {
        const std::string name = "t" + std::to_string(counter);
        w.addLink(name);
        std::string type;
        const double r = uni(rng, 0, 1);
        if (opt.multiDofTreeJoints && r < 0.1)
          type = "spherical";
        else if (opt.multiDofTreeJoints && r < 0.15)
          type = "planar";
        else if (r < 0.15 + opt.prismaticProbability)
          type = "prismatic";
        else
          type = uni(rng, 0, 1) < 0.5 ? "revolute" : "continuous";
        const GVec3 axis = uni(rng, 0, 1) < 0.25 ? GVec3(GVec3::Unit(uniInt(rng, 0, 2)) * sign(rng))
                                                 : unitVec(rng);
        w.addJoint(name + "_joint", type, mount, name, w.randomPose(0.3), axis);
        const int nv = type == "spherical" || type == "planar" ? 3 : 1;
        if (nv > 1) out.singleDofTree = false;
        out.spanningNv += nv;
        out.independentNv += nv;
        mounts.push_back(name);
        if (uni(rng, 0, 1) < opt.fixedLinkProbability) {
          w.addLink(name + "_tool");
          w.addJoint(name + "_tool_fixed", "fixed", name, name + "_tool", w.randomPose(0.2),
                     GVec3::UnitX());
        }
      } else {
        const MechanismKind kind = kinds[uniInt(rng, 0, static_cast<int>(kinds.size()) - 1)];
        MechanismBuilder mb(w, "m" + std::to_string(counter), mount);
        mb.mountAsLoopSuccessor = opt.mountAsLoopSuccessor;
        mb.build(kind);
        out.kinds.push_back(kind);
        out.spanningNv += mb.spanningNv;
        for (auto& c : mb.clusters) {
          out.independentNv += c.dof;
          if (c.outputLink == "base_link" && !opt.floatingBase) c.outputLink = "";
          out.clusters.push_back(c);
        }
        for (const auto& m : mb.newMounts) mounts.push_back(m);
      }
    }
    out.urdf = w.write(opt.robotName, opt.shuffleElements);
    if (w.precisionOk || attempt >= 20) return out;
  }
}

}  // namespace clusterdyn::testgen
