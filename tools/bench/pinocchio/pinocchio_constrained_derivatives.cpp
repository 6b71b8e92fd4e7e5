// clusterdyn's computeConstrainedDynamicsDerivatives against Pinocchio 4.1's
// computeConstraintDynamicsDerivatives on a tree model (an *_approximate.urdf twin) with world
// contacts in the LOCAL frame (3D points, 6D welds, no Baumgarte terms), at random states:
//
//   pinocchio_constrained_derivatives MODEL.urdf LINK:ROWS [LINK:ROWS ...] [--tol X]
//
// e.g. mit_humanoid_approximate.urdf right_ankle_link:6 left_ankle_link:6. Both libraries in one
// program: Pinocchio header-only (its model from urdf_model.hpp), clusterdyn linked
// (libclusterdyn_core.a). Coordinates are mapped by joint name (free flyer v = [v; omega] in
// Pinocchio, [omega; v] in clusterdyn; 6D rows [linear; angular] against [angular; linear]);
// both use the joint's right exponential for the configuration tangent. Prints the largest
// deviation max |pin - cd| / max(1, max |cd|) per derivative; exit 1 above --tol (default 1e-9).
#include <algorithm>
#include <array>
#include <clusterdyn/constrained_derivatives.hpp>
#include <clusterdyn/mjcf.hpp>
#include <clusterdyn/urdf.hpp>
#include <cmath>
#include <cstdio>
#include <pinocchio/algorithm/constrained-dynamics-derivatives.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/multibody.hpp>
#include <random>
#include <string>
#include <vector>

#include "urdf_model.hpp"

namespace pin = pinocchio;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.urdf LINK:ROWS [LINK:ROWS ...] [--tol X]\n", argv[0]);
    return 2;
  }
  double tol = 1e-9;
  std::vector<std::pair<std::string, int>> contacts;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tol" && i + 1 < argc) {
      tol = std::atof(argv[++i]);
      continue;
    }
    const size_t c = a.rfind(':');
    if (c == std::string::npos) return std::fprintf(stderr, "bad contact '%s'\n", a.c_str()), 2;
    contacts.emplace_back(a.substr(0, c), std::atoi(a.c_str() + c + 1));
  }
  const pin::Model model = urdf_model::buildModel(argv[1]);
  pin::Data data(model);
  const clusterdyn::ClusterModel cm =
      clusterdyn::buildClusterModel(clusterdyn::parseModelFile(argv[1]));
  const clusterdyn::Model& tree = cm.treeModel;
  const int nv = model.nv;
  if (tree.nv != nv || cm.ny != nv) return std::fprintf(stderr, "nv differs\n"), 1;

  // v_pin = P v_cd; q_cd from q_pin joint by joint (the twins have no unbounded joints).
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(nv, nv);
  std::vector<std::array<int, 3>> qmap;  // pin idx_q, cd idx_q, nq
  for (pin::JointIndex j = 1; j < model.njoints; ++j) {
    const auto it = std::find(tree.jointNames.begin(), tree.jointNames.end(), model.names[j]);
    if (it == tree.jointNames.end())
      return std::fprintf(stderr, "joint '%s' missing\n", model.names[j].c_str()), 1;
    const int b = static_cast<int>(it - tree.jointNames.begin());
    const bool ff = model.joints[j].shortname() == "JointModelFreeFlyer";
    for (int k = 0; k < model.joints[j].nv(); ++k)
      P(model.joints[j].idx_v() + k, tree.idx_v[b] + (ff ? (k + 3) % 6 : k)) = 1.0;
    qmap.push_back({model.joints[j].idx_q(), tree.idx_q[b], model.joints[j].nq()});
  }

  clusterdyn::ConstraintSet set(cm);
  std::vector<pin::RigidConstraintModel, Eigen::aligned_allocator<pin::RigidConstraintModel>> rcm;
  std::vector<pin::RigidConstraintData, Eigen::aligned_allocator<pin::RigidConstraintData>> rcd;
  std::vector<int> rowOf;  // Pinocchio row i = clusterdyn row rowOf[i]
  for (const auto& [link, rows] : contacts) {
    const pin::FrameIndex f = model.getFrameId(link, pin::BODY);
    if (f >= model.frames.size()) return std::fprintf(stderr, "no link '%s'\n", link.c_str()), 2;
    rcm.emplace_back(rows == 3 ? pin::CONTACT_3D : pin::CONTACT_6D, model,
                     model.frames[f].parentJoint, model.frames[f].placement, pin::LOCAL);
    rcd.emplace_back(rcm.back());
    const int r0 = set.rows();
    set.addContact(
        link, rows == 3 ? clusterdyn::ConstraintType::Point : clusterdyn::ConstraintType::Weld);
    for (int k = 0; k < rows; ++k) rowOf.push_back(r0 + (rows == 6 ? (k + 3) % 6 : k));
  }
  const int m = set.rows();
  Eigen::MatrixXd R = Eigen::MatrixXd::Zero(m, m);
  for (int i = 0; i < m; ++i) R(i, rowOf[i]) = 1.0;

  clusterdyn::ClusterData cdata(cm);
  clusterdyn::ConstrainedDerivativeData cdd(cm, set);
  pin::initConstraintDynamics(model, data, rcm, rcd);
  pin::ProximalSettings exact;  // mu 0, one pass: the exact KKT solve
  const char* names[8] = {"ddq",      "lambda",    "ddq_dq",    "ddq_dv",
                          "ddq_dtau", "lambda_dq", "lambda_dv", "lambda_dtau"};
  double worst[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  auto dev = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd lo = model.lowerPositionLimit.cwiseMax(-1.0);
  Eigen::VectorXd hi = model.upperPositionLimit.cwiseMin(1.0);
  for (int i = 0; i < lo.size(); ++i)
    if (!(lo[i] < hi[i])) lo[i] = -1.0, hi[i] = 1.0;
  for (int s = 0; s < 5; ++s) {
    const Eigen::VectorXd qp = pin::randomConfiguration(model, lo, hi);
    Eigen::VectorXd vp(nv), tp(nv);
    for (int i = 0; i < nv; ++i) vp[i] = u(rng), tp[i] = u(rng);
    pin::constraintDynamics(model, data, qp, vp, tp, rcm, rcd, exact);
    pin::computeConstraintDynamicsDerivatives(model, data, rcm, rcd, exact);
    clusterdyn::VecX q(tree.nq);
    for (const auto& e : qmap) q.segment(e[1], e[2]) = qp.segment(e[0], e[2]);
    const clusterdyn::VecX v = P.transpose() * vp, tau = P.transpose() * tp;
    const clusterdyn::Status st =
        clusterdyn::computeConstrainedDynamicsDerivatives(cm, cdata, set, cdd, q, v, tau);
    if (st != clusterdyn::Status::Ok)
      return std::fprintf(stderr, "clusterdyn: %s\n", cdata.errorMessage()), 1;
    const double d[8] = {dev(data.ddq, P * cdd.ydd),
                         dev(data.lambda_c, R * cdd.lambda),
                         dev(data.ddq_dq, P * cdd.dydd_dy * P.transpose()),
                         dev(data.ddq_dv, P * cdd.dydd_dydot * P.transpose()),
                         dev(data.ddq_dtau, P * cdd.dydd_dtau * P.transpose()),
                         dev(data.dlambda_dq, R * cdd.dlambda_dy * P.transpose()),
                         dev(data.dlambda_dv, R * cdd.dlambda_dydot * P.transpose()),
                         dev(data.dlambda_dtau, R * cdd.dlambda_dtau * P.transpose())};
    for (int k = 0; k < 8; ++k) worst[k] = std::max(worst[k], d[k]);
  }
  bool ok = true;
  for (int k = 0; k < 8; ++k) {
    std::printf("%-12s %.2e\n", names[k], worst[k]);
    ok = ok && worst[k] <= tol;
  }
  return ok ? 0 : 1;
}
