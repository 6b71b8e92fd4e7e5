// Cluster-tree algorithms (CE-ABA, CE-RNEA, H, C, loop closure, projection) against oracles that
// do not use the library's constraint code:
//  * the tree algorithms on ClusterModel::treeModel (crba -> M, rnea -> c) and
//  * a loop-closure residual written here: couplings and mimics from the URDF text (paths to the
//    nearest common ancestor computed here), loop joints from the tree's forward kinematics and
//    the <loop> origins. Its Jacobian K and bias k (K v_dot = k) come from finite differences.
// Tolerances: kExact (1e-9 relative) for algebraic identities that only suffer round-off;
// kFd (1e-6 relative) for every comparison that involves a finite-difference quantity.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "dense_oracles.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;
using clusterdyn::test::isClose;
using clusterdyn::test::relativeError;

namespace {

constexpr double kExact = 1e-9;  // identities: round-off only
constexpr double kFd = 1e-6;     // anything computed by finite differences

double maxAbs(const MatX& a) { return a.size() ? a.cwiseAbs().maxCoeff() : 0.0; }

// ---------------------------------------------------------------------------------------------
// Models.

struct ModelCase {
  std::string name;
  std::string urdf;  // URDF text (generated / hand-written) ...
  std::string path;  // ... or a file
  ModelOptions options = {};
};

std::ostream& operator<<(std::ostream& os, const ModelCase& mc) { return os << mc.name; }

UrdfDescription describeCase(const ModelCase& mc) {
  return mc.path.empty() ? parseUrdfString(mc.urdf, mc.name + ".urdf") : parseUrdfFile(mc.path);
}

bool fileHasChords(const std::string& path) {
  const std::string s = clusterdyn::test::readTextFile(path);
  return s.find("<loop") != std::string::npos || s.find("<coupling") != std::string::npos ||
         s.find("<mimic") != std::string::npos;
}

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Hand-written differential: two rotors on the forearm drive wrist pitch (y) and roll (x) in
// series: (q_a + q_b) / 16 = q_pitch and (q_a - q_b) / 20 = q_pitch + q_roll (the successor path
// of the roll coupling runs through the pitch joint). rotorsIndependent picks y.
std::string differentialUrdf(bool rotorsIndependent) {
  const std::string rot = rotorsIndependent ? "true" : "false";
  const std::string out = rotorsIndependent ? " independent=\"false\"" : "";
  auto inertial = [](double m, const char* com, double ixx, double iyy, double izz) {
    std::ostringstream os;
    os << "<inertial><origin xyz=\"" << com << "\"/><mass value=\"" << m << "\"/><inertia ixx=\""
       << ixx << "\" iyy=\"" << iyy << "\" izz=\"" << izz
       << "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>";
    return os.str();
  };
  std::ostringstream os;
  os << "<robot name=\"hand_differential\">\n"
     << "  <link name=\"base\"/>\n"
     << "  <link name=\"forearm\">" << inertial(1.2, "0 0 -0.15", 0.02, 0.02, 0.003) << "</link>\n"
     << "  <link name=\"rotor_a\">" << inertial(0.0, "0 0 0", 2e-4, 2e-4, 3e-4) << "</link>\n"
     << "  <link name=\"rotor_b\">" << inertial(0.1, "0 0 0.01", 2e-4, 2e-4, 3e-4) << "</link>\n"
     << "  <link name=\"pitch_link\">" << inertial(0.3, "0.02 0 -0.02", 5e-4, 6e-4, 4e-4)
     << "</link>\n"
     << "  <link name=\"roll_link\">" << inertial(0.4, "0 0.01 -0.05", 8e-4, 7e-4, 3e-4)
     << "</link>\n"
     << "  <joint name=\"elbow\" type=\"revolute\"><parent link=\"base\"/><child "
        "link=\"forearm\"/><origin xyz=\"0 0 0.5\" rpy=\"0.1 0 0\"/><axis xyz=\"0 1 0\"/>"
        "<limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"10\"/></joint>\n"
     << "  <joint name=\"rotor_a_joint\" type=\"continuous\" independent=\"" << rot
     << "\"><parent link=\"forearm\"/><child link=\"rotor_a\"/><origin xyz=\"0.03 0 -0.2\"/>"
        "<axis xyz=\"0 0 1\"/></joint>\n"
     << "  <joint name=\"rotor_b_joint\" type=\"continuous\" independent=\"" << rot
     << "\"><parent link=\"forearm\"/><child link=\"rotor_b\"/><origin xyz=\"-0.03 0 -0.2\"/>"
        "<axis xyz=\"0 0 -1\"/></joint>\n"
     << "  <joint name=\"wrist_pitch\" type=\"continuous\"" << out
     << "><parent link=\"forearm\"/><child link=\"pitch_link\"/><origin xyz=\"0 0 -0.3\"/>"
        "<axis xyz=\"0 1 0\"/></joint>\n"
     << "  <joint name=\"wrist_roll\" type=\"continuous\"" << out
     << "><parent link=\"pitch_link\"/><child link=\"roll_link\"/><origin xyz=\"0 0 -0.04\" "
        "rpy=\"0 0.2 0\"/><axis xyz=\"1 0 0\"/></joint>\n"
     << "  <coupling name=\"pitch_coupling\"><predecessor link=\"rotor_a\" ratio=\"0.0625\"/>"
        "<predecessor link=\"rotor_b\" ratio=\"0.0625\"/><successor link=\"pitch_link\"/>"
        "</coupling>\n"
     << "  <coupling name=\"roll_coupling\"><predecessor link=\"rotor_a\" ratio=\"0.05\"/>"
        "<predecessor link=\"rotor_b\" ratio=\"-0.05\"/><successor link=\"roll_link\"/>"
        "</coupling>\n"
     << "</robot>\n";
  return os.str();
}

// Hand-written mimics: q_f = -0.7 q_leader + 0.25 (prismatic follower) and
// q_f2 = 2 q_f - 0.1 (a chain), all on the base.
std::string mimicUrdf() {
  const char* inertial =
      "<inertial><origin xyz=\"0.05 0.01 0\"/><mass value=\"0.5\"/><inertia ixx=\"0.002\" "
      "iyy=\"0.003\" izz=\"0.004\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>";
  std::ostringstream os;
  os << "<robot name=\"hand_mimic\">\n  <link name=\"base\"/>\n"
     << "  <link name=\"link_l\">" << inertial << "</link>\n"
     << "  <link name=\"link_f\">" << inertial << "</link>\n"
     << "  <link name=\"link_f2\">" << inertial << "</link>\n"
     << "  <joint name=\"leader\" type=\"revolute\"><parent link=\"base\"/><child link=\"link_l\"/>"
        "<origin xyz=\"0.1 0 0\"/><axis xyz=\"0 0 1\"/><limit lower=\"-3\" upper=\"3\" "
        "effort=\"1\" velocity=\"1\"/></joint>\n"
     << "  <joint name=\"follower\" type=\"prismatic\"><parent link=\"base\"/><child "
        "link=\"link_f\"/><origin xyz=\"-0.1 0 0\" rpy=\"0 0.3 0\"/><axis xyz=\"1 0 0\"/>"
        "<limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/>"
        "<mimic joint=\"leader\" multiplier=\"-0.7\" offset=\"0.25\"/></joint>\n"
     << "  <joint name=\"follower2\" type=\"revolute\" independent=\"false\"><parent "
        "link=\"base\"/><child link=\"link_f2\"/><origin xyz=\"0 0.1 0\"/><axis xyz=\"0 1 0\"/>"
        "<limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/>"
        "<mimic joint=\"follower\" multiplier=\"2\" offset=\"-0.1\"/></joint>\n"
     << "</robot>\n";
  return os.str();
}

std::vector<ModelCase> loopModelCases() {
  std::vector<ModelCase> cases;
  // One model per mechanism kind, fixed and floating base.
  int seed = 0;
  for (auto kind : testgen::allMechanismKinds()) {
    for (int fl = 0; fl < 2; ++fl) {
      std::mt19937_64 rng(7000 + seed++);
      testgen::GeneratorOptions o;
      o.floatingBase = fl;
      o.treeLinks = 2;
      o.mechanisms = 1;
      o.kinds = {kind};
      o.robotName =
          std::string("kind_") + testgen::mechanismName(kind) + (fl ? "_floating" : "_fixed");
      const auto r = testgen::generateLoopModel(rng, o);
      cases.push_back({o.robotName, r.urdf, ""});
    }
  }
  // Mixed random models.
  for (int s = 0; s < 24; ++s) {
    std::mt19937_64 rng(9100 + s);
    testgen::GeneratorOptions o;
    o.floatingBase = s % 2 == 1;
    o.treeLinks = 2 + s % 3;
    o.mechanisms = 2 + s % 3;
    o.robotName = "random_" + std::to_string(s) + (o.floatingBase ? "_floating" : "_fixed");
    const auto r = testgen::generateLoopModel(rng, o);
    cases.push_back({o.robotName, r.urdf, ""});
  }
  cases.push_back({"hand_differential_outputs", differentialUrdf(false), ""});
  cases.push_back({"hand_differential_rotors", differentialUrdf(true), ""});
  cases.push_back({"hand_mimic", mimicUrdf(), ""});
  // Shared third-party models with chords, and a few benchmark files.
  const std::string shared = clusterdyn::test::sharedPath("urdfplus");
  if (fs::exists(shared)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(shared))
      if (e.path().extension() == ".urdf" && fileHasChords(e.path().string()))
        files.push_back(e.path().string());
    for (const char* rel :
         {"benchmarks/variable_four_bar_urdf/four_bar_branch_2_3.urdf",
          "benchmarks/variable_revolute_pair_urdf/revolute_rotor_pair_branch_2_3.urdf",
          "benchmarks/parallel_chains/Implicit/depth5/loop_size5.urdf",
          "benchmarks/parallel_chains/Implicit/depth10/loop_size9.urdf",
          "benchmarks/parallel_chains/Explicit/depth10/loop_size8.urdf"})
      if (fs::exists(shared + "/" + rel)) files.push_back(shared + "/" + rel);
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      cases.push_back({"shared_" + sanitize(fs::relative(f, shared).string()), "", f});
  }
  // ModelOptions: a floating base added by the builder (the root link becomes a moving body,
  // so loops pinned to it move) and a non-default gravity.
  {
    ModelOptions fl;
    fl.floatingBase = true;
    fl.gravity = Vec3(1.5, -2.0, -9.0);
    for (int s = 0; s < 4; ++s) {
      std::mt19937_64 rng(9900 + s);
      testgen::GeneratorOptions o;
      o.treeLinks = 1;
      o.mechanisms = 3;
      o.kinds = {testgen::MechanismKind::SerialFourBar, testgen::MechanismKind::PrismaticLoopSlider,
                 testgen::MechanismKind::Belt, testgen::MechanismKind::FourBarRotorOnCoupler};
      o.robotName = "option_floating_" + std::to_string(s);
      cases.push_back({o.robotName, testgen::generateLoopModel(rng, o).urdf, "", fl});
    }
    for (const char* rel : {"four_bar.urdf", "mit_humanoid_leg.urdf"})
      if (fs::exists(shared + "/" + rel))
        cases.push_back({"option_floating_" + sanitize(rel), "", shared + "/" + rel, fl});
  }
  // The project's own models (written in parallel by another engineer; may be empty).
  const std::string models = CLUSTERDYN_MODELS_DIR;
  if (fs::exists(models)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(models))
      if (e.path().extension() == ".urdf") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      cases.push_back({"models_" + sanitize(fs::path(f).stem().string()), "", f});
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Independent constraint oracle.

class ConstraintOracle {
 public:
  ConstraintOracle(const Model& tree, const UrdfDescription& urdf) : t_(tree), data_(tree) {
    for (const auto& c : urdf.couplings) {
      Relation r;
      r.name = c.name;
      const int succ = bodyOf(c.successor);
      int C = succ;
      for (const auto& p : c.predecessors) C = nca(C, bodyOf(p.link));
      std::map<int, double> coeff;
      for (const auto& p : c.predecessors)
        for (int b = bodyOf(p.link); b != C; b = t_.parent[b]) coeff[b] += p.ratio;
      for (int b = succ; b != C; b = t_.parent[b]) coeff[b] -= 1.0;
      for (const auto& [b, x] : coeff)
        if (x != 0.0) r.terms.emplace_back(b, x);
      relations_.push_back(r);
    }
    for (const auto& j : urdf.joints) {
      if (!j.mimic.present) continue;
      Relation r;
      r.name = j.name;
      r.terms = {{t_.jointId(j.name), 1.0}, {t_.jointId(j.mimic.joint), -j.mimic.multiplier}};
      r.offset = j.mimic.offset;
      relations_.push_back(r);
    }
    for (const auto& l : urdf.loops) {
      if (l.cut) continue;  // closure="cut": not a constraint of the cluster tree
      LoopFrames f;
      f.type = l.type;
      f.pb = bodyOf(l.predecessor);
      f.sb = bodyOf(l.successor);
      f.pM = placementOf(l.predecessor) * l.predecessorOrigin;
      f.sM = placementOf(l.successor) * l.successorOrigin;
      f.axis = l.axis.normalized();
      loops_.push_back(f);
    }
  }

  int rows() const { return static_cast<int>(relations_.size() + 6 * loops_.size()); }
  bool hasLoops() const { return !loops_.empty(); }

  /// Position residual: relations, then 6 rows per loop joint (world coordinates).
  VecX residual(const VecX& q) {
    VecX r(rows());
    int row = 0;
    for (const auto& rel : relations_) {
      double s = -rel.offset;
      for (const auto& [b, x] : rel.terms) s += x * q[t_.idx_q[b]];
      r[row++] = s;
    }
    if (!loops_.empty()) r.tail(6 * loops_.size()) = loopResidual(q);
    return r;
  }

  /// K = d residual / d v (velocity coordinates, through integrate()): relation rows exact,
  /// loop rows by central differences (step 1e-6).
  MatX jacobian(const VecX& q) {
    MatX K = MatX::Zero(rows(), t_.nv);
    for (size_t r = 0; r < relations_.size(); ++r)
      for (const auto& [b, x] : relations_[r].terms) K(r, t_.idx_v[b]) += x;
    if (loops_.empty()) return K;
    const double h = 1e-6;
    VecX e = VecX::Zero(t_.nv);
    for (int j = 0; j < t_.nv; ++j) {
      e[j] = 1.0;
      K.bottomRows(6 * loops_.size()).col(j) =
          (loopResidual(integrate(t_, q, e, h)) - loopResidual(integrate(t_, q, e, -h))) / (2 * h);
      e[j] = 0.0;
    }
    return K;
  }

  /// k with K v_dot = k: minus the second derivative of the residual along the path
  /// integrate(q, v, s) (zero generalized acceleration), five-point stencil.
  VecX bias(const VecX& q, const VecX& v) {
    VecX k = VecX::Zero(rows());
    if (loops_.empty()) return k;
    const double h = 1e-3 / std::max(1.0, maxAbs(v));
    auto f = [&](double s) { return loopResidual(integrate(t_, q, v, s)); };
    k.tail(6 * loops_.size()) =
        -(-f(2 * h) + 16 * f(h) - 30 * f(0) + 16 * f(-h) - f(-2 * h)) / (12 * h * h);
    return k;
  }

 private:
  struct Relation {
    std::string name;
    std::vector<std::pair<int, double>> terms;  // (body whose 1-dof joint, coefficient)
    double offset = 0.0;
  };
  struct LoopFrames {
    JointType type = JointType::Fixed;
    int pb = -1, sb = -1;
    Transform pM, sM;
    Vec3 axis;
  };

  int bodyOf(const std::string& link) const { return t_.frames[t_.frameId(link)].body; }
  Transform placementOf(const std::string& link) const {
    return t_.frames[t_.frameId(link)].placement;
  }
  int nca(int a, int b) const {
    std::set<int> anc;
    for (int x = a; x >= 0; x = t_.parent[x]) anc.insert(x);
    for (int x = b; x >= 0; x = t_.parent[x])
      if (anc.count(x)) return x;
    return -1;
  }
  static Vec3 rotationLog(const Mat3& R) {
    const Eigen::AngleAxisd aa(R);
    return aa.angle() * aa.axis();
  }

  VecX loopResidual(const VecX& q) {
    EXPECT_EQ(forwardKinematics(t_, data_, q), Status::Ok);
    VecX r = VecX::Zero(6 * loops_.size());
    for (size_t l = 0; l < loops_.size(); ++l) {
      const LoopFrames& f = loops_[l];
      const Transform oP = (f.pb >= 0 ? data_.oMi[f.pb] : Transform()) * f.pM;
      const Transform oS = (f.sb >= 0 ? data_.oMi[f.sb] : Transform()) * f.sM;
      const Vec3 d = oS.p - oP.p;
      const Vec3 aP = oP.R * f.axis, aS = oS.R * f.axis;
      auto seg = r.segment<6>(6 * l);
      if (f.type == JointType::Revolute) {
        seg << d, aP.cross(aS);
      } else if (f.type == JointType::Prismatic) {
        seg << aP.cross(d), rotationLog(oP.R.transpose() * oS.R);
      } else if (f.type == JointType::Planar) {
        seg << aP.dot(d), 0.0, 0.0, aP.cross(aS);
      } else if (f.type == JointType::Spherical) {
        seg << d, 0.0, 0.0, 0.0;
      } else {  // fixed
        seg << d, rotationLog(oP.R.transpose() * oS.R);
      }
    }
    return r;
  }

  const Model& t_;
  Data data_;
  std::vector<Relation> relations_;
  std::vector<LoopFrames> loops_;
};

// ---------------------------------------------------------------------------------------------
// Helpers.

std::vector<int> dependentVelocities(const ClusterModel& cm) {
  std::set<int> ind(cm.independentVelocity.begin(), cm.independentVelocity.end());
  std::vector<int> dep;
  for (int j = 0; j < cm.treeModel.nv; ++j)
    if (!ind.count(j)) dep.push_back(j);
  return dep;
}

double smallestSingularRatio(const MatX& A) {
  if (A.cols() == 0) return 1.0;
  Eigen::JacobiSVD<MatX> svd(A);
  const VecX s = svd.singularValues();
  if (s.size() < A.cols() || s[0] == 0.0) return 0.0;
  return s[A.cols() - 1] / s[0];
}

struct Fixture {
  ModelCase mc;
  UrdfDescription urdf;
  ClusterModel cm;
  std::unique_ptr<ClusterData> data;
  std::unique_ptr<Data> td;
  std::unique_ptr<ConstraintOracle> oracle;
  std::mt19937_64 rng;
  VecX yRef;

  explicit Fixture(const ModelCase& c) : mc(c) {
    urdf = describeCase(mc);
    cm = buildClusterModel(urdf, mc.options);
    data = std::make_unique<ClusterData>(cm);
    td = std::make_unique<Data>(cm.treeModel);
    oracle = std::make_unique<ConstraintOracle>(cm.treeModel, urdf);
    rng.seed(std::hash<std::string>()(mc.name));
    yRef.resize(cm.nyq);
    VecX yd(cm.ny);
    EXPECT_EQ(
        spanningToIndependent(cm, *data, cm.qReference, VecX::Zero(cm.treeModel.nv), yRef, yd),
        Status::Ok);
  }

  /// A random closed spanning state (q, v) and its independent (y, ydot). Loop-cluster
  /// coordinates move at most 0.3 rad from the reference (and away from singular poses: the
  /// dependent columns of the oracle's K must be well conditioned).
  bool randomState(VecX& q, VecX& v, VecX& y, VecX& ydot) {
    const std::vector<int> dep = dependentVelocities(cm);
    auto wellConditioned = [&](const support::ClosedState& s) {
      if (dep.empty()) return true;
      const MatX K = oracle->jacobian(s.q);
      MatX Kd(K.rows(), dep.size());
      for (size_t j = 0; j < dep.size(); ++j) Kd.col(j) = K.col(dep[j]);
      return smallestSingularRatio(Kd) >= 1e-4;
    };
    support::ClosedState s;
    // Offsets of 0.3 (rad or m) first; a linkage that does not assemble that far (a Stewart
    // platform's 0.3 m legs) gets 0.05.
    if (!support::randomClosedStateNearReference(cm, *data, rng, s, 0.3, 40, wellConditioned) &&
        !support::randomClosedStateNearReference(cm, *data, rng, s, 0.05, 40, wellConditioned))
      return false;
    q = s.q, v = s.v, y = s.y, ydot = s.ydot;
    return true;
  }
};

class LoopModels : public ::testing::TestWithParam<ModelCase> {};

// ---------------------------------------------------------------------------------------------
// Constraint Jacobian, G and the dense KKT system.

TEST_P(LoopModels, ConstraintMatricesAndKkt) {
  Fixture f(GetParam());
  const ClusterModel& cm = f.cm;
  const Model& t = cm.treeModel;
  ClusterData& data = *f.data;
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    VecX q, v, y, yd;
    ASSERT_TRUE(f.randomState(q, v, y, yd)) << "no well-conditioned closed state found";
    const VecX tauS = clusterdyn::test::randomVector(t.nv, f.rng, -2, 2);
    std::vector<Force> fext;
    if (trial == 2) fext = clusterdyn::test::randomForces(t, f.rng);
    const Force* fp = fext.empty() ? nullptr : fext.data();

    ASSERT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS, fp), Status::Ok) << data.errorMessage();
    const VecX ydd = data.ydd, qdd = data.qdd;
    ASSERT_EQ(clusterConstraintMatrices(cm, data, q, v), Status::Ok) << data.errorMessage();
    MatX G;
    VecX g;
    oracle::globalExplicitForm(cm, data, G, g);

    // (b) the independent rows of G are the identity.
    for (int j = 0; j < cm.ny; ++j) {
      VecX e = VecX::Zero(cm.ny);
      e[j] = 1.0;
      EXPECT_TRUE(isClose(G.row(cm.independentVelocity[j]).transpose(), e, 1e-14))
          << "row of " << cm.independentVelocityNames[j];
    }
    // g vanishes on independent coordinates.
    for (int j = 0; j < cm.ny; ++j) EXPECT_EQ(g[cm.independentVelocity[j]], 0.0);
    // Spanning accelerations are G ydd + g.
    EXPECT_TRUE(isClose(qdd, G * ydd + g, 1e-12));
    // The library's own rows, cluster by cluster through the public accessors: K G = 0 and
    // K qdd = k (explicit clusters: the constant relations and k = 0).
    for (int kc = 0; kc < static_cast<int>(cm.clusters.size()); ++kc) {
      const Cluster& c = cm.clusters[kc];
      const MatX& Kc = data.constraintJacobian(kc);
      ASSERT_EQ(Kc.rows(), c.constraintRows) << c.name;
      ASSERT_EQ(Kc.cols(), c.nv) << c.name;
      ASSERT_EQ(data.constraintBias(kc).size(), c.constraintRows) << c.name;
      if (!c.implicit()) EXPECT_TRUE(isClose(Kc, c.Kexplicit, 0.0)) << c.name;
      if (Kc.rows() == 0) continue;
      const MatX& Gc = data.explicitMatrix(kc);
      const double scale = std::max(1.0, maxAbs(Kc) * std::max(maxAbs(Gc), maxAbs(qdd)));
      EXPECT_LE(maxAbs(Kc * Gc), kExact * scale) << c.name << ": K G != 0";
      EXPECT_LE(maxAbs(Kc * qdd.segment(c.v0, c.nv) - data.constraintBias(kc)), kExact * scale)
          << c.name << ": K qdd != k";
    }

    // (a) K G = 0 with K by finite differences of the oracle's residual; rank K = nv - ny.
    const MatX K = f.oracle->jacobian(q);
    const VecX k = f.oracle->bias(q, v);
    EXPECT_LE(maxAbs(f.oracle->residual(q)), 1e-9) << "state not closed";
    if (K.rows() > 0) {
      const double KG = maxAbs((K * G));
      const double scale = std::max(1.0, maxAbs(K) * maxAbs(G));
      EXPECT_LE(KG / scale, 1e-8) << "K G != 0 (FD)";
      EXPECT_LE(maxAbs((K * v)), 1e-8 * scale * (1 + maxAbs(v)));
    }
    int rank = 0;
    MatX Ur(K.rows(), 0);
    if (K.rows() > 0) {
      Eigen::JacobiSVD<MatX> svd(K, Eigen::ComputeFullU);
      const VecX sv = svd.singularValues();
      for (int i = 0; i < sv.size(); ++i)
        if (sv[i] > 1e-7 * std::max(1.0, sv[0])) ++rank;
      Ur = svd.matrixU().leftCols(rank);
    }
    EXPECT_EQ(rank, t.nv - cm.ny) << "constraint rank does not match the independent count";

    // Dense KKT on the spanning tree: M qdd = tau - c + Kr^T lambda, Kr qdd = kr.
    ASSERT_EQ(crba(t, *f.td, q), Status::Ok);
    const MatX M = f.td->M;
    ASSERT_EQ(rnea(t, *f.td, q, v, VecX::Zero(t.nv), fp), Status::Ok);
    const VecX c = f.td->tau;  // C v + g - J^T fext
    const MatX Kr = Ur.transpose() * K;
    const VecX kr = Ur.transpose() * k;
    const oracle::KktSolution kkt = oracle::solveKktLu(M, Kr, tauS - c, kr);
    ASSERT_TRUE(kkt.ok) << "singular KKT matrix";
    EXPECT_TRUE(isClose(qdd, kkt.acceleration, kFd)) << "CE-ABA vs dense KKT (K, k by FD)";
    // The acceleration constraint K qdd = k (k by FD).
    // (The FD K errs by ~1e-10 |K|: with the large accelerations of light bodies, e.g. a delta
    // rod's spin, axial inertia 9e-8 kg m^2, that error times |qdd| enters the bound.)
    if (K.rows() > 0) {
      EXPECT_LE(maxAbs((K * qdd - k)),
                kFd * std::max({1.0, maxAbs((K * qdd)), 1e-3 * maxAbs(K) * maxAbs(qdd)}));
    }

    // (d) G^T M G ydd = G^T (tau - c - M g): exact given the library's G, g.
    EXPECT_TRUE(isClose(G.transpose() * M * G * ydd, G.transpose() * (tauS - c - M * g), kExact));
    // (e) KKT residual M qdd + c - tau lies in the row space of K: lambda by least squares.
    const VecX r = M * qdd + c - tauS;
    if (rank > 0) {
      const VecX lambda = Kr.transpose().colPivHouseholderQr().solve(r);
      EXPECT_TRUE(
          isClose(Kr.transpose() * lambda, r, kFd, std::max({1.0, maxAbs(tauS), maxAbs(c)})))
          << "KKT residual not in the range of K^T";
    } else {
      EXPECT_TRUE(isClose(r, VecX::Zero(t.nv), kExact));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Forward / inverse dynamics, H, C, entry points.

TEST_P(LoopModels, InverseDynamicsMassMatrixAndBias) {
  Fixture f(GetParam());
  const ClusterModel& cm = f.cm;
  const Model& t = cm.treeModel;
  ClusterData& data = *f.data;
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    VecX q, v, y, yd;
    ASSERT_TRUE(f.randomState(q, v, y, yd));
    std::vector<Force> fext;
    if (trial == 1) fext = clusterdyn::test::randomForces(t, f.rng);
    const Force* fp = fext.empty() ? nullptr : fext.data();
    const VecX tauY = clusterdyn::test::randomVector(cm.ny, f.rng, -2, 2);
    const VecX tauS = clusterdyn::test::randomVector(t.nv, f.rng, -2, 2);

    ASSERT_EQ(clusterConstraintMatrices(cm, data, q, v), Status::Ok);
    MatX G;
    VecX g;
    oracle::globalExplicitForm(cm, data, G, g);

    // ceAbaSpanningForces(tau) == ceAba(G^T tau).
    ASSERT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS, fp), Status::Ok) << data.errorMessage();
    const VecX yddS = data.ydd, qddS = data.qdd;
    const VecX tauProjected = G.transpose() * tauS;
    ASSERT_EQ(ceAba(cm, data, q, v, tauProjected, fp), Status::Ok);
    EXPECT_TRUE(isClose(data.ydd, yddS, kExact));
    EXPECT_TRUE(isClose(data.qdd, qddS, kExact));

    // ceRnea(ceAba(tau)) = tau.
    ASSERT_EQ(ceAba(cm, data, q, v, tauY, fp), Status::Ok);
    const VecX ydd = data.ydd, qdd = data.qdd;
    ASSERT_EQ(ceRnea(cm, data, q, v, ydd, fp), Status::Ok) << data.errorMessage();
    EXPECT_TRUE(isClose(data.tauY, tauY, kExact)) << "ceRnea(ceAba(tau)) != tau";
    EXPECT_TRUE(isClose(data.qdd, qdd, kExact));

    // H against G^T M G (tree CRBA) and against CE-RNEA columns.
    ASSERT_EQ(crba(t, *f.td, q), Status::Ok);
    const MatX M = f.td->M;
    ASSERT_EQ(clusterMassMatrix(cm, data, q), Status::Ok) << data.errorMessage();
    const MatX H = data.H;
    EXPECT_TRUE(isClose(H, G.transpose() * M * G, kExact)) << "H != G^T M G";
    EXPECT_TRUE(isClose(H, H.transpose(), 1e-14));
    ASSERT_EQ(clusterBias(cm, data, q, v), Status::Ok) << data.errorMessage();
    const VecX C = data.C;
    ASSERT_EQ(ceRnea(cm, data, q, v, VecX::Zero(cm.ny)), Status::Ok);
    EXPECT_TRUE(isClose(C, data.tauY, 1e-12)) << "clusterBias != ceRnea(ydd = 0)";
    ASSERT_EQ(nonLinearEffects(t, *f.td, q, v), Status::Ok);
    EXPECT_TRUE(isClose(C, G.transpose() * (f.td->nle + M * g), kExact)) << "C != G^T (c + M g)";
    MatX Hcols(cm.ny, cm.ny);
    for (int j = 0; j < cm.ny; ++j) {
      VecX e = VecX::Zero(cm.ny);
      e[j] = 1.0;
      ASSERT_EQ(ceRnea(cm, data, q, v, e), Status::Ok);
      Hcols.col(j) = data.tauY - C;
    }
    EXPECT_TRUE(isClose(H, Hcols, kExact)) << "H e_j != ceRnea(e_j) - C";
    if (!fp) {
      EXPECT_TRUE(isClose(H * ydd + C, tauY, kExact)) << "H ydd + C != tau";
    }

    // ceAbaIndependent == independentToSpanning + ceAba.
    data.q = q;
    ASSERT_EQ(ceAbaIndependent(cm, data, y, yd, tauY, fp), Status::Ok) << data.errorMessage();
    EXPECT_TRUE(isClose(data.ydd, ydd, kExact));
    EXPECT_TRUE(isClose(data.q, q, 1e-10));
    EXPECT_TRUE(isClose(data.v, v, 1e-10));
    // spanningToIndependent is the selection.
    VecX y2(cm.nyq), yd2(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, q, v, y2, yd2), Status::Ok);
    EXPECT_TRUE(isClose(y2, y, 1e-15));
    EXPECT_TRUE(isClose(yd2, yd, 1e-15));
  }
}

// ---------------------------------------------------------------------------------------------
// (c) Along a constrained trajectory the spanning acceleration is G ydd + g.

TEST_P(LoopModels, TrajectoryAccelerationMatchesGAndg) {
  Fixture f(GetParam());
  const ClusterModel& cm = f.cm;
  const Model& t = cm.treeModel;
  ClusterData& data = *f.data;
  // Coordinates that move: independent 1-dof joints (multi-dof joints stay still, G = I there).
  std::vector<std::pair<int, int>> moving;  // (y velocity index, y position index)
  for (int j = 0; j < cm.ny; ++j) {
    const int body = t.velocityOwner[cm.independentVelocity[j]];
    if (t.nvs[body] != 1) continue;
    const auto it =
        std::find(cm.independentPosition.begin(), cm.independentPosition.end(), t.idx_q[body]);
    ASSERT_NE(it, cm.independentPosition.end());
    moving.emplace_back(j, static_cast<int>(it - cm.independentPosition.begin()));
  }
  for (int trial = 0; trial < 2; ++trial) {
    VecX q0, v0, y0, yd0;
    ASSERT_TRUE(f.randomState(q0, v0, y0, yd0));
    VecX ydot = VecX::Zero(cm.ny), yddot = VecX::Zero(cm.ny);
    for (auto [j, p] : moving) {
      ydot[j] = yd0[j];
      yddot[j] = std::uniform_real_distribution<double>(-2, 2)(f.rng);
    }
    auto state = [&](double s, VecX& q, VecX& v) {
      VecX y = y0, yd = ydot + s * yddot;
      for (auto [j, p] : moving) y[p] += ydot[j] * s + 0.5 * yddot[j] * s * s;
      data.q = q0;
      EXPECT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok) << data.errorMessage();
      q = data.q;
      v = data.v;
    };
    VecX q, v;
    state(0.0, q, v);
    ASSERT_EQ(ceRnea(cm, data, q, v, yddot), Status::Ok) << data.errorMessage();
    const VecX qddExpected = data.qdd;  // G ydd + g
    const double h = 1e-3;
    VecX qp1, vp1, qm1, vm1, qp2, vp2, qm2, vm2;
    state(h, qp1, vp1);
    state(-h, qm1, vm1);
    state(2 * h, qp2, vp2);
    state(-2 * h, qm2, vm2);
    const VecX vdot = (-vp2 + 8 * vp1 - 8 * vm1 + vm2) / (12 * h);
    EXPECT_TRUE(isClose(vdot, qddExpected, kFd)) << "FD spanning acceleration vs G ydd + g";
    // The closed positions move with the spanning velocity (1-dof joints).
    for (int b = 0; b < t.nbodies; ++b) {
      if (t.nvs[b] != 1) continue;
      const int iq = t.idx_q[b], iv = t.idx_v[b];
      const double qdot = (-qp2[iq] + 8 * qp1[iq] - 8 * qm1[iq] + qm2[iq]) / (12 * h);
      EXPECT_NEAR(qdot, v[iv], kFd * std::max(1.0, maxAbs(v))) << t.jointNames[b];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Position level: loop closure and projection.

TEST_P(LoopModels, LoopClosureAndProjection) {
  Fixture f(GetParam());
  const ClusterModel& cm = f.cm;
  const Model& t = cm.treeModel;
  ClusterData& data = *f.data;
  const bool implicit = !cm.loops.empty();
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    VecX q, v, y, yd;
    ASSERT_TRUE(f.randomState(q, v, y, yd));
    // Cold-ish start: from the reference configuration.
    data.q = cm.qReference;
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok) << data.errorMessage();
    EXPECT_LE(data.lastResidual, 1e-12);
    const int cold = data.lastIterations;
    EXPECT_LE(maxAbs(f.oracle->residual(data.q)), 1e-10);
    const VecX qs = data.q;
    VecX yBack(cm.nyq), ydBack(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, qs, v, yBack, ydBack), Status::Ok);
    EXPECT_TRUE(isClose(yBack, y, 0.0)) << "independent positions not kept";
    // Warm start at the solution: at most one polishing iteration.
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok);
    EXPECT_LE(data.lastIterations, 1);
    EXPECT_LE(data.lastIterations, cold);
    EXPECT_LE(data.lastResidual, 1e-12);
    EXPECT_TRUE(isClose(data.q, qs, 1e-12));
    // A small step from a warm start converges quadratically (few iterations).
    VecX y2 = y;
    for (const Cluster& c : cm.clusters)
      if (c.constrained()) y2.segment(c.yq0, c.nyq).array() += 1e-4;
    for (int k = 0; k < cm.nyq; ++k)  // an independent ball joint of a loop: a unit quaternion
      if (cm.independentPositionNames[k].size() > 3 &&
          cm.independentPositionNames[k].compare(cm.independentPositionNames[k].size() - 3, 3,
                                                 ":qx") == 0)
        y2.segment<4>(k).normalize();
    ASSERT_EQ(solveLoopClosure(cm, data, y2), Status::Ok);
    EXPECT_LE(data.lastIterations, 4);
    EXPECT_LE(data.lastResidual, 1e-12);
    EXPECT_LE(maxAbs(f.oracle->residual(data.q)), 1e-10);
    if (implicit && trial == 0) {
      // The closure moved the dependent coordinates: by Newton, or by the branch predictor
      // alone (exact, cold == 0, where the branch is linear in the joint angles: parallelograms).
      double moved = 0.0;
      for (const Cluster& c : cm.clusters)
        if (c.implicit())
          for (int i : c.dependent) {
            const int iq = t.idx_q[t.velocityOwner[c.v0 + i]];
            moved = std::max(moved, std::abs(qs[iq] - cm.qReference[iq]));
          }
      EXPECT_GT(moved, 0.0) << "closure left the dependent coordinates at the reference?";
    }

    // Projection of a perturbed state: constraints hold, independent coordinates are kept,
    // the velocity is G y_dot with y_dot the independent part, and projecting again is a no-op.
    const VecX qBad = integrate(t, q, clusterdyn::test::randomVector(t.nv, f.rng, -1, 1), 1e-2);
    const VecX vBad = v + clusterdyn::test::randomVector(t.nv, f.rng, -0.5, 0.5);
    ASSERT_EQ(projectToConstraints(cm, data, qBad, vBad), Status::Ok) << data.errorMessage();
    const VecX qp = data.q, vp = data.v;
    EXPECT_LE(maxAbs(f.oracle->residual(qp)), 1e-10);
    const MatX K = f.oracle->jacobian(qp);
    if (K.rows() > 0) {
      EXPECT_LE(maxAbs((K * vp)), kFd * std::max(1.0, maxAbs(K) * maxAbs(vp)));
    }
    VecX yIn(cm.nyq), ydIn(cm.ny), yOut(cm.nyq), ydOut(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, qBad, vBad, yIn, ydIn), Status::Ok);
    ASSERT_EQ(spanningToIndependent(cm, data, qp, vp, yOut, ydOut), Status::Ok);
    EXPECT_TRUE(isClose(yOut, yIn, 0.0));
    EXPECT_TRUE(isClose(ydOut, ydIn, 0.0));
    ASSERT_EQ(clusterConstraintMatrices(cm, data, qp, vp), Status::Ok);
    MatX G;
    VecX g;
    oracle::globalExplicitForm(cm, data, G, g);
    EXPECT_TRUE(isClose(vp, G * ydIn, 1e-12));
    ASSERT_EQ(projectToConstraints(cm, data, qp, vp), Status::Ok);
    EXPECT_TRUE(isClose(data.q, qp, 1e-12)) << "projection not idempotent (q)";
    EXPECT_TRUE(isClose(data.v, vp, 1e-12)) << "projection not idempotent (v)";
  }
}

// ---------------------------------------------------------------------------------------------
// Energy balance along integrated trajectories.

/// d/dt of the independent positions: 1-dof coordinates move with y_dot, floating bases with
/// p_dot = R v, quat_dot = quat (x) (omega, 0) / 2, spherical joints with the same quaternion
/// rate, planar joints with the in-plane rotation of (vx, vy) (child axes).
bool positionRate(const ClusterModel& cm, const VecX& y, const VecX& yd, VecX& dy) {
  const Model& t = cm.treeModel;
  dy.setZero(cm.nyq);
  for (const Cluster& cl : cm.clusters) {
    if (cl.constrained() && cl.nyq == cl.ny) {  // 1-dof independent joints
      dy.segment(cl.yq0, cl.nyq) = yd.segment(cl.y0, cl.ny);
      continue;
    }
    // One joint: an unconstrained cluster's, or a loop cluster's independent multi-dof joint.
    struct {
      int yq0, y0;
    } c{cl.yq0, cl.y0};
    const int b = cl.constrained() ? t.velocityOwner[cl.v0 + cl.independent[0]] : cl.firstBody;
    if (cl.constrained() && t.nvs[b] != cl.ny) return false;
    switch (t.joints[b].type) {
      case JointType::Revolute:
      case JointType::Prismatic:
        dy[c.yq0] = yd[c.y0];
        break;
      case JointType::Floating: {
        const Eigen::Quaterniond qu(y[c.yq0 + 6], y[c.yq0 + 3], y[c.yq0 + 4], y[c.yq0 + 5]);
        const Vec3 w = yd.segment<3>(c.y0), vl = yd.segment<3>(c.y0 + 3);
        dy.segment<3>(c.yq0) = qu.normalized().toRotationMatrix() * vl;
        const Eigen::Quaterniond wq(0.0, w.x(), w.y(), w.z());
        dy.segment<4>(c.yq0 + 3) = 0.5 * (qu * wq).coeffs();
        break;
      }
      case JointType::Spherical: {
        const Eigen::Quaterniond qu(y[c.yq0 + 3], y[c.yq0], y[c.yq0 + 1], y[c.yq0 + 2]);
        const Vec3 w = yd.segment<3>(c.y0);
        dy.segment<4>(c.yq0) = 0.5 * (qu * Eigen::Quaterniond(0.0, w.x(), w.y(), w.z())).coeffs();
        break;
      }
      case JointType::Planar: {  // (x, y, theta); (vx, vy) in child axes, omega
        const double th = y[c.yq0 + 2], vx = yd[c.y0], vy = yd[c.y0 + 1];
        dy[c.yq0] = std::cos(th) * vx - std::sin(th) * vy;
        dy[c.yq0 + 1] = std::sin(th) * vx + std::cos(th) * vy;
        dy[c.yq0 + 2] = yd[c.y0 + 2];
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

TEST_P(LoopModels, EnergyBalance) {
  Fixture f(GetParam());
  const ClusterModel& cm = f.cm;
  const Model& t = cm.treeModel;
  ClusterData& data = *f.data;
  VecX q0, v0, y0, yd0;
  ASSERT_TRUE(f.randomState(q0, v0, y0, yd0));
  VecX dummy;
  ASSERT_TRUE(positionRate(cm, y0, yd0, dummy));
  auto normalized = [&](VecX y) {
    for (const Cluster& c : cm.clusters) {
      if (c.constrained()) continue;
      if (t.joints[c.firstBody].type == JointType::Floating) y.segment<4>(c.yq0 + 3).normalize();
      if (t.joints[c.firstBody].type == JointType::Spherical) y.segment<4>(c.yq0).normalize();
    }
    for (const Cluster& c : cm.clusters)  // an independent ball joint of a loop cluster
      for (int k = c.yq0; c.constrained() && k < c.yq0 + c.nyq; ++k)
        if (cm.independentPositionNames[k].size() > 3 &&
            cm.independentPositionNames[k].compare(cm.independentPositionNames[k].size() - 3, 3,
                                                   ":qx") == 0)
          y.segment<4>(k).normalize();
    return y;
  };
  // Constant efforts on every 1-dof coordinate, none on the floating base.
  VecX tauY = VecX::Zero(cm.ny), tauS = VecX::Zero(t.nv);
  for (int j = 0; j < cm.ny; ++j)
    if (t.nvs[t.velocityOwner[cm.independentVelocity[j]]] == 1)
      tauY[j] = std::uniform_real_distribution<double>(-1, 1)(f.rng);
  for (int b = 0; b < t.nbodies; ++b)
    if (t.nvs[b] == 1) tauS[t.idx_v[b]] = std::uniform_real_distribution<double>(-1, 1)(f.rng);

  for (int variant = 0; variant < 2; ++variant) {  // 0: tauY (ceAbaIndependent), 1: spanning
    SCOPED_TRACE(variant == 0 ? "independent efforts" : "spanning efforts");
    auto accel = [&](const VecX& y, const VecX& yd, VecX& ydd) {
      if (variant == 0) {
        EXPECT_EQ(ceAbaIndependent(cm, data, normalized(y), yd, tauY), Status::Ok)
            << data.errorMessage();
      } else {
        EXPECT_EQ(independentToSpanning(cm, data, normalized(y), yd), Status::Ok);
        const VecX q = data.q, v = data.v;
        EXPECT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS), Status::Ok) << data.errorMessage();
      }
      ydd = data.ydd;
    };
    struct Sample {
      double E, PE, P;
      VecX q;
    };
    auto sample = [&](const VecX& y, const VecX& yd) {
      EXPECT_EQ(independentToSpanning(cm, data, normalized(y), yd), Status::Ok);
      Sample s;
      s.q = data.q;
      const double KE = kineticEnergy(t, *f.td, data.q, data.v);
      s.PE = potentialEnergy(t, *f.td, data.q);
      s.E = KE + s.PE;
      s.P = variant == 0 ? yd.dot(tauY) : data.v.dot(tauS);
      return s;
    };
    // Scale the efforts so that they cause accelerations of at most 5 (light rotors would
    // otherwise spin up to thousands of rad/s and a fixed step would not resolve the motion).
    {
      VecX a1, a0;
      const VecX tY = tauY, tS = tauS;
      data.q = q0;
      accel(y0, yd0, a1);
      tauY.setZero();
      tauS.setZero();
      data.q = q0;
      accel(y0, yd0, a0);
      const double lin = maxAbs(a1 - a0);
      tauY = tY * std::min(1.0, 5.0 / std::max(lin, 1e-300));
      tauS = tS * std::min(1.0, 5.0 / std::max(lin, 1e-300));
    }
    const double dt = 1.25e-4;  // RK4 over T = 0.04 s
    const int N = 320;
    VecX y = y0, yd = yd0;
    data.q = q0;
    std::vector<Sample> samples = {sample(y, yd)};
    for (int n = 0; n < N; ++n) {  // classical RK4 on (y, y_dot)
      VecX k1y, k2y, k3y, k4y, k1v, k2v, k3v, k4v;
      ASSERT_TRUE(positionRate(cm, y, yd, k1y));
      accel(y, yd, k1v);
      VecX ya = y + 0.5 * dt * k1y, va = yd + 0.5 * dt * k1v;
      positionRate(cm, ya, va, k2y);
      accel(ya, va, k2v);
      VecX yb = y + 0.5 * dt * k2y, vb = yd + 0.5 * dt * k2v;
      positionRate(cm, yb, vb, k3y);
      accel(yb, vb, k3v);
      VecX yc = y + dt * k3y, vc = yd + dt * k3v;
      positionRate(cm, yc, vc, k4y);
      accel(yc, vc, k4v);
      y += dt / 6 * (k1y + 2 * k2y + 2 * k3y + k4y);
      yd += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
      y = normalized(y);
      samples.push_back(sample(y, yd));
      if (HasFatalFailure()) return;
    }
    // Work of constant efforts: tau_j * (change of the 1-dof coordinate j).
    double W = 0.0;
    if (variant == 0) {
      for (int j = 0; j < cm.ny; ++j) {
        if (tauY[j] == 0.0) continue;
        const int body = t.velocityOwner[cm.independentVelocity[j]];
        W += tauY[j] * (samples.back().q[t.idx_q[body]] - samples.front().q[t.idx_q[body]]);
      }
    } else {
      for (int b = 0; b < t.nbodies; ++b)
        if (t.nvs[b] == 1)
          W += tauS[t.idx_v[b]] * (samples.back().q[t.idx_q[b]] - samples.front().q[t.idx_q[b]]);
    }
    const double dE = samples.back().E - samples.front().E;
    const double scale = 1.0 + std::abs(W) + std::abs(samples.back().PE - samples.front().PE);
    EXPECT_LE(std::abs(dE - W), 1e-7 * scale) << "energy change " << dE << " vs work " << W;
    // Instantaneous balance dE/dt = power, by finite differences along the trajectory.
    for (int i : {2, N / 2, N - 2}) {
      auto d = [&](auto get) {
        return (-get(samples[i + 2]) + 8 * get(samples[i + 1]) - 8 * get(samples[i - 1]) +
                get(samples[i - 2])) /
               (12 * dt);
      };
      const double dEdt = d([](const Sample& s) { return s.E; });
      const double dPEdt = d([](const Sample& s) { return s.PE; });
      EXPECT_LE(std::abs(dEdt - samples[i].P),
                kFd * (1.0 + std::abs(samples[i].P) + std::abs(dPEdt)))
          << "step " << i << ": dE/dt " << dEdt << " vs power " << samples[i].P;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cluster, LoopModels, ::testing::ValuesIn(loopModelCases()),
                         [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Hand-derived explicit constraints.

int yIndex(const ClusterModel& cm, const std::string& name) {
  const auto& n = cm.independentVelocityNames;
  const auto it = std::find(n.begin(), n.end(), name);
  return it == n.end() ? -1 : static_cast<int>(it - n.begin());
}

TEST(ClusterDifferential, GMatchesHandDerivation) {
  for (bool rotorsIndependent : {false, true}) {
    SCOPED_TRACE(rotorsIndependent ? "rotors independent" : "outputs independent");
    const ClusterModel cm =
        buildClusterModel(parseUrdfString(differentialUrdf(rotorsIndependent), "diff.urdf"));
    const Model& t = cm.treeModel;
    ASSERT_EQ(cm.ny, 3);
    ASSERT_EQ(t.nv, 5);
    const int k = cm.bodyCluster[t.bodyId("pitch_link")];
    const Cluster& c = cm.clusters[k];
    EXPECT_EQ(c.nbodies, 4);
    EXPECT_EQ(c.outputBody, t.bodyId("forearm"));
    EXPECT_FALSE(c.implicit());
    // Rows: spanning joints; columns: y.
    const std::vector<std::string> rows = {"wrist_pitch", "wrist_roll", "rotor_a_joint",
                                           "rotor_b_joint"};
    Eigen::Matrix<double, 4, 2> expected;
    std::vector<std::string> cols;
    if (!rotorsIndependent) {
      cols = {"wrist_pitch", "wrist_roll"};
      // q_a + q_b = 16 p, q_a - q_b = 20 (p + r)  =>  q_a = 18 p + 10 r, q_b = -2 p - 10 r.
      expected << 1, 0, 0, 1, 18, 10, -2, -10;
    } else {
      cols = {"rotor_a_joint", "rotor_b_joint"};
      // p = (a + b) / 16, r = (a - b) / 20 - p = -a / 80 - 9 b / 80.
      expected << 1.0 / 16, 1.0 / 16, -1.0 / 80, -9.0 / 80, 1, 0, 0, 1;
    }
    ClusterData data(cm);
    VecX q = cm.qReference, v = VecX::Zero(t.nv);
    ASSERT_EQ(clusterConstraintMatrices(cm, data, q, v), Status::Ok);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) {
        const int vi = t.velocityIndex(rows[i]) - c.v0, yj = yIndex(cm, cols[j]) - c.y0;
        ASSERT_GE(yj, 0);
        EXPECT_NEAR(c.G(vi, yj), expected(i, j), 1e-14) << rows[i] << " / " << cols[j];
        EXPECT_NEAR(data.explicitMatrix(k)(vi, yj), expected(i, j), 1e-14);
      }
    EXPECT_TRUE(isClose(data.explicitBias(k), VecX::Zero(4), 0.0));
    // Position level: the same linear map (couplings hold for positions with zero offset).
    VecX y(cm.nyq);
    y << 0.3, -0.4, 0.7;  // elbow, then the cluster's two coordinates
    ASSERT_EQ(cm.independentPositionNames[0], "elbow");
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok) << data.errorMessage();
    Eigen::Vector2d yc(y[1], y[2]);
    if (yIndex(cm, cols[0]) > yIndex(cm, cols[1])) std::swap(yc[0], yc[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_NEAR(data.q[t.positionIndex(rows[i])], expected.row(i).dot(yc), 1e-14) << rows[i];
  }
}

TEST(ClusterMimic, PositionAndVelocityRelations) {
  const ClusterModel cm = buildClusterModel(parseUrdfString(mimicUrdf(), "mimic.urdf"));
  const Model& t = cm.treeModel;
  ASSERT_EQ(cm.ny, 1);
  ASSERT_EQ(cm.clusters.size(), 1u);
  EXPECT_EQ(cm.independentVelocityNames[0], "leader");
  ClusterData data(cm);
  for (double ql : {0.4, -1.3, 0.0}) {
    VecX y(1);
    y << ql;
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok);
    const double qf = -0.7 * ql + 0.25, qf2 = 2.0 * qf - 0.1;
    EXPECT_NEAR(data.q[t.positionIndex("leader")], ql, 1e-15);
    EXPECT_NEAR(data.q[t.positionIndex("follower")], qf, 1e-14);
    EXPECT_NEAR(data.q[t.positionIndex("follower2")], qf2, 1e-14);
    VecX yd(1);
    yd << 0.9;
    ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok);
    EXPECT_NEAR(data.v[t.velocityIndex("follower")], -0.7 * 0.9, 1e-14);
    EXPECT_NEAR(data.v[t.velocityIndex("follower2")], -1.4 * 0.9, 1e-14);
    const Cluster& c = cm.clusters[0];
    EXPECT_NEAR(c.G(t.velocityIndex("follower") - c.v0, 0), -0.7, 1e-15);
    EXPECT_NEAR(c.G(t.velocityIndex("follower2") - c.v0, 0), -1.4, 1e-15);
  }
  // A state with the wrong offset violates the mimic.
  VecX q = data.q;
  q[t.positionIndex("follower")] += 1e-3;
  EXPECT_EQ(ceAba(cm, data, q, VecX::Zero(t.nv), VecX::Zero(1)), Status::ConstraintFailure);
}

// ---------------------------------------------------------------------------------------------
// Models without chords: the cluster algorithms reduce to the tree algorithms.

// A ClusterData holds its per-cluster scratch behind a handle: a copy must be an independent
// workspace (deep copy) that computes the same results, and a move must keep the buffers.
TEST(ClusterDataHandle, CopiesAreDeepAndMovesKeepTheBuffers) {
  const ClusterModel cm = loadModel(clusterdyn::test::modelsPath("cd_four_bar.urdf"));
  ASSERT_TRUE(cm.hasImplicitClusters());
  std::mt19937_64 rng(7);
  ClusterData data(cm);
  support::ClosedState s1, s2;
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, s1, 0.3, 40));
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, s2, 0.3, 40));
  const VecX tau = clusterdyn::test::randomVector(cm.ny, rng, -1, 1);
  int loop = -1;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
    if (cm.clusters[k].implicit()) loop = k;

  ASSERT_EQ(ceAba(cm, data, s1.q, s1.v, tau), Status::Ok) << data.errorMessage();
  const VecX ydd1 = data.ydd;
  const MatX G1 = data.explicitMatrix(loop);
  ClusterData copy(data);
  EXPECT_EQ(copy.model, &cm);
  EXPECT_NE(&copy.explicitMatrix(loop), &data.explicitMatrix(loop));
  EXPECT_NE(copy.explicitMatrix(loop).data(), data.explicitMatrix(loop).data());
  EXPECT_TRUE(isClose(copy.explicitMatrix(loop), G1, 0.0));
  // The copy computes at another state; the original keeps its results and its scratch.
  ASSERT_EQ(ceAba(cm, copy, s2.q, s2.v, tau), Status::Ok) << copy.errorMessage();
  EXPECT_FALSE(isClose(copy.explicitMatrix(loop), G1, 1e-6));
  EXPECT_TRUE(isClose(data.explicitMatrix(loop), G1, 0.0));
  EXPECT_TRUE(isClose(data.ydd, ydd1, 0.0));
  // Same results as the original at the same state.
  ASSERT_EQ(ceAba(cm, data, s2.q, s2.v, tau), Status::Ok);
  EXPECT_TRUE(isClose(copy.ydd, data.ydd, kExact));
  // Copy assignment into a workspace of the same model reuses its buffers.
  ClusterData assigned(cm);
  const double* before = assigned.explicitMatrix(loop).data();
  assigned = data;
  EXPECT_EQ(assigned.explicitMatrix(loop).data(), before);
  EXPECT_TRUE(isClose(assigned.explicitMatrix(loop), data.explicitMatrix(loop), 0.0));
  // A move keeps the buffers.
  const double* storage = copy.explicitMatrix(loop).data();
  ClusterData moved(std::move(copy));
  EXPECT_EQ(moved.explicitMatrix(loop).data(), storage);
  ASSERT_EQ(ceAba(cm, moved, s1.q, s1.v, tau), Status::Ok) << moved.errorMessage();
  EXPECT_TRUE(isClose(moved.ydd, ydd1, kExact));
  ClusterData target(cm);
  target = std::move(moved);
  EXPECT_EQ(target.explicitMatrix(loop).data(), storage);
}

TEST(ClusterTreeOnly, ReducesToTreeAlgorithms) {
  std::vector<std::pair<std::string, std::string>> cases;  // (name, path or "" + text)
  std::vector<std::string> texts;
  for (const auto& p : clusterdyn::test::sharedTreeModelFiles()) cases.push_back({p, ""});
  for (const auto& p : clusterdyn::test::bundledTreeModelFiles()) cases.push_back({p, ""});
  for (int s = 0; s < 8; ++s) {
    std::mt19937_64 rng(500 + s);
    testgen::GeneratorOptions o;
    o.floatingBase = s % 2;
    o.treeLinks = 7;
    o.mechanisms = 0;
    o.robotName = "tree_" + std::to_string(s);
    cases.push_back({o.robotName, testgen::generateLoopModel(rng, o).urdf});
  }
  std::mt19937_64 rng(99);
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    const ClusterModel cm =
        text.empty() ? loadModel(name) : buildClusterModel(parseUrdfString(text, name));
    const Model& t = cm.treeModel;
    ASSERT_FALSE(cm.hasLoops());
    ASSERT_EQ(cm.ny, t.nv);
    ASSERT_EQ(cm.nyq, t.nq);
    EXPECT_EQ(static_cast<int>(cm.clusters.size()), t.nbodies);
    ClusterData data(cm);
    Data td(t);
    for (int trial = 0; trial < 3; ++trial) {
      const auto st = clusterdyn::test::randomState(t, rng);
      std::vector<Force> fext = clusterdyn::test::randomForces(t, rng);
      const Force* fp = trial == 1 ? fext.data() : nullptr;
      ASSERT_EQ(ceAba(cm, data, st.q, st.v, st.tau, fp), Status::Ok) << data.errorMessage();
      ASSERT_EQ(aba(t, td, st.q, st.v, st.tau, fp), Status::Ok);
      EXPECT_TRUE(isClose(data.ydd, td.ddq, kExact)) << "ceAba != aba";
      EXPECT_TRUE(isClose(data.qdd, td.ddq, kExact));
      ASSERT_EQ(ceRnea(cm, data, st.q, st.v, st.a, fp), Status::Ok);
      ASSERT_EQ(rnea(t, td, st.q, st.v, st.a, fp), Status::Ok);
      EXPECT_TRUE(isClose(data.tauY, td.tau, kExact)) << "ceRnea != rnea";
      ASSERT_EQ(clusterMassMatrix(cm, data, st.q), Status::Ok);
      ASSERT_EQ(crba(t, td, st.q), Status::Ok);
      EXPECT_TRUE(isClose(data.H, td.M, kExact)) << "H != M";
      ASSERT_EQ(clusterBias(cm, data, st.q, st.v), Status::Ok);
      ASSERT_EQ(nonLinearEffects(t, td, st.q, st.v), Status::Ok);
      EXPECT_TRUE(isClose(data.C, td.nle, kExact)) << "C != nle";
      ASSERT_EQ(ceAbaSpanningForces(cm, data, st.q, st.v, st.tau), Status::Ok);
      ASSERT_EQ(aba(t, td, st.q, st.v, st.tau), Status::Ok);
      EXPECT_TRUE(isClose(data.ydd, td.ddq, kExact));
      // Loop closure is the identity map.
      ASSERT_EQ(solveLoopClosure(cm, data, st.q), Status::Ok);
      EXPECT_TRUE(isClose(data.q, st.q, 0.0));
    }
  }
}

}  // namespace
