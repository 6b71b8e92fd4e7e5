// Pinocchio 4.1's constraintDynamics on the loop models with ball joints (issue #25), compiled:
// the C++ side of `tools/bench/multidof_pinocchio.py --pin-cpp`. One translation unit,
// header-only Pinocchio (no library linked), built by the script against the headers of the pip
// package `pin` (its cmeel prefix) and the system's Eigen:
//
//   g++ -O3 -std=c++17 -DNDEBUG -w -isystem /usr/include/eigen3 -isystem PIN_INCLUDE \
//       -DBOOST_MPL_LIMIT_LIST_SIZE=30 -DBOOST_MPL_LIMIT_VECTOR_SIZE=30 \
//       -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS -DBOOST_FUSION_INVOKE_MAX_ARITY=12 \
//       tools/bench/pinocchio/multidof_constraint_dynamics.cpp -o multidof_constraint_dynamics
//
//   multidof_constraint_dynamics DESCRIPTION CALLS REPEAT
//
// DESCRIPTION: the text written by multidof_pinocchio.py from the Python model of
// python/tests/urdfplus_pinocchio.py (whose reader builds the tree through Pinocchio's API:
// URDF+ spherical joints and <loop> elements are beyond Pinocchio's URDF reader), so both sides
// time the same pinocchio::Model, the same RigidConstraintModels and the same state:
//
//   joint PARENT R|P|S AX AY AZ  PLACEMENT(12)  INERTIA(10)  NAME   one per joint, in order:
//       R: JointModelRevoluteUnaligned(axis), P: JointModelPrismaticUnaligned(axis),
//       S: JointModelSpherical (axis ignored); PLACEMENT: rotation row by row, translation;
//       INERTIA: mass, centre of mass (3), rotational inertia about it (xx xy yy xz yz zz)
//   constraint 3D|6D JOINT1 PLACEMENT1(12) JOINT2 PLACEMENT2(12)    LOCAL reference frame
//   settings ACCURACY MU MAX_ITER                                   pinocchio::ProximalSettings
//   q N ...   v N ...   tau N ...                                   the state, Pinocchio's order
//
// Output: "iterations I", "us_per_call T" (the wall median over REPEAT batches of CALLS calls of
// constraintDynamics, each batch after one untimed call) and "qdd N ..." (%.17g) for the
// script's check against the Python binding's result.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/multibody.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pin = pinocchio;

namespace {

template <typename T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

std::runtime_error descriptionError(const std::string& what) {
  return std::runtime_error("description: " + what);
}

double number(std::istream& in, const char* what) {
  double x = 0.0;
  if (!(in >> x)) throw descriptionError(std::string("expected a number (") + what + ")");
  return x;
}

pin::SE3 placement(std::istream& in) {
  Eigen::Matrix3d R;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R(i, j) = number(in, "placement rotation");
  Eigen::Vector3d p;
  for (int i = 0; i < 3; ++i) p[i] = number(in, "placement translation");
  return pin::SE3(R, p);
}

Eigen::VectorXd vector(std::istream& in, const char* what) {
  const double n = number(in, what);
  if (!(n >= 0 && n < 1e6)) throw descriptionError(std::string(what) + ": bad size");
  Eigen::VectorXd x(static_cast<Eigen::Index>(n));
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = number(in, what);
  return x;
}

struct Problem {
  pin::Model model;
  AlignedVector<pin::RigidConstraintModel> constraints;
  pin::ProximalSettings settings;
  Eigen::VectorXd q, v, tau;
};

Problem read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw descriptionError("cannot open " + path);
  Problem p;
  std::string key;
  bool haveSettings = false;
  while (in >> key) {
    if (key == "joint") {
      const int parent = static_cast<int>(number(in, "joint parent"));
      std::string type;
      in >> type;
      Eigen::Vector3d axis;
      for (int i = 0; i < 3; ++i) axis[i] = number(in, "joint axis");
      const pin::SE3 M = placement(in);
      const double mass = number(in, "mass");
      Eigen::Vector3d com;
      for (int i = 0; i < 3; ++i) com[i] = number(in, "centre of mass");
      double s[6];
      for (double& x : s) x = number(in, "rotational inertia");
      std::string name;
      in >> name;
      if (parent < 0 || parent >= p.model.njoints)
        throw descriptionError("joint " + name + ": parent out of range");
      pin::JointIndex id = 0;
      if (type == "R")
        id = p.model.addJoint(parent, pin::JointModelRevoluteUnaligned(axis), M, name);
      else if (type == "P")
        id = p.model.addJoint(parent, pin::JointModelPrismaticUnaligned(axis), M, name);
      else if (type == "S")
        id = p.model.addJoint(parent, pin::JointModelSpherical(), M, name);
      else
        throw descriptionError("joint " + name + ": type '" + type + "' (R, P or S)");
      // The joint's inertia as the Python model holds it (its bodies already combined).
      p.model.inertias[id] =
          pin::Inertia(mass, com, pin::Symmetric3(s[0], s[1], s[2], s[3], s[4], s[5]));
    } else if (key == "constraint") {
      std::string type;
      in >> type;
      if (type != "3D" && type != "6D")
        throw descriptionError("constraint type '" + type + "' (3D or 6D)");
      const int j1 = static_cast<int>(number(in, "joint1"));
      const pin::SE3 M1 = placement(in);
      const int j2 = static_cast<int>(number(in, "joint2"));
      const pin::SE3 M2 = placement(in);
      if (j1 < 0 || j1 >= p.model.njoints || j2 < 0 || j2 >= p.model.njoints)
        throw descriptionError("constraint joint out of range");
      p.constraints.emplace_back(type == "3D" ? pin::CONTACT_3D : pin::CONTACT_6D, p.model, j1, M1,
                                 j2, M2, pin::LOCAL);
    } else if (key == "settings") {
      const double accuracy = number(in, "accuracy"), mu = number(in, "mu");
      const int maxIter = static_cast<int>(number(in, "max_iter"));
      p.settings = pin::ProximalSettings(accuracy, mu, maxIter);
      haveSettings = true;
    } else if (key == "q") {
      p.q = vector(in, "q");
    } else if (key == "v") {
      p.v = vector(in, "v");
    } else if (key == "tau") {
      p.tau = vector(in, "tau");
    } else {
      throw descriptionError("unknown key '" + key + "'");
    }
  }
  if (!haveSettings) throw descriptionError("no settings line");
  if (p.q.size() != p.model.nq || p.v.size() != p.model.nv || p.tau.size() != p.model.nv)
    throw descriptionError("q, v, tau sizes do not match the model (nq " +
                           std::to_string(p.model.nq) + ", nv " + std::to_string(p.model.nv) + ")");
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || std::atoi(argv[2]) <= 0 || std::atoi(argv[3]) <= 0) {
    std::fprintf(stderr, "usage: %s DESCRIPTION CALLS REPEAT\n", argv[0]);
    return 2;
  }
  try {
    Problem p = read(argv[1]);
    const int calls = std::atoi(argv[2]), repeat = std::atoi(argv[3]);
    pin::Data data(p.model);
    AlignedVector<pin::RigidConstraintData> datas;
    for (const pin::RigidConstraintModel& cm : p.constraints) datas.emplace_back(cm);
    pin::initConstraintDynamics(p.model, data, p.constraints, datas);
    Eigen::VectorXd qdd =
        pin::constraintDynamics(p.model, data, p.q, p.v, p.tau, p.constraints, datas, p.settings);
    const int iterations = static_cast<int>(p.settings.iter);
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
      pin::constraintDynamics(p.model, data, p.q, p.v, p.tau, p.constraints, datas, p.settings);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i)
        pin::constraintDynamics(p.model, data, p.q, p.v, p.tau, p.constraints, datas, p.settings);
      const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
      times.push_back(dt.count() / calls);
    }
    std::nth_element(times.begin(), times.begin() + repeat / 2, times.end());
    std::printf("iterations %d\nus_per_call %.4f\nqdd %d", iterations, times[repeat / 2],
                static_cast<int>(qdd.size()));
    for (Eigen::Index i = 0; i < qdd.size(); ++i) std::printf(" %.17g", qdd[i]);
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
