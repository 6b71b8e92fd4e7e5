// The loop models of the cluster-tree algorithm tests (test_ce_aba.cpp, test_ce_rnea.cpp,
// test_cluster_algorithms.cpp) and their oracles, which do not use the library's constraint code:
//  * the tree algorithms on ClusterModel::treeModel (crba -> M, rnea -> c) and
//  * a loop-closure residual written here: couplings and mimics from the URDF text (paths to the
//    nearest common ancestor computed here), loop joints from the tree's forward kinematics and
//    the <loop> origins. Its Jacobian K and bias k (K v_dot = k) come from finite differences.
// Tolerances: kExact (1e-9 relative) for algebraic identities that only suffer round-off;
// kFd (1e-6 relative) for every comparison that involves a finite-difference quantity.
// Included by one test source per executable: its definitions have internal linkage.
#pragma once

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

namespace clusterdyn::test::loops {

namespace fs = std::filesystem;

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

/// The suite of the loop models (TEST_P(LoopModels, ...)): each test has the model case's
/// Fixture f and the names cm (its cluster model), t (the spanning tree) and data.
class LoopModels : public ::testing::TestWithParam<ModelCase> {
 protected:
  LoopModels() : f(GetParam()), cm(f.cm), t(f.cm.treeModel), data(*f.data) {}
  Fixture f;
  const ClusterModel& cm;
  const Model& t;
  ClusterData& data;
};

}  // namespace

}  // namespace clusterdyn::test::loops
