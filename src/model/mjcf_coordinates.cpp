// Independent coordinates of MJCF loops. MJCF has no URDF+ independent="false" mark, so the
// reader chooses the dependent joints: the equalities' constraint Jacobian K on the spanning
// tree at qpos0 (clusterdyn q = 0); the multi-dof joints it moves are dependent as a whole, and a
// greedy column basis of K over the 1-dof joints completes them, unactuated joints first, last
// joint in file order first (the actuated joints, the mimic leaders and the first joints of a loop
// stay independent). Joint-equality followers (<mimic>) are dependent already.
#include <Eigen/QR>
#include <map>
#include <set>

#include "clusterdyn/configuration.hpp"
#include "clusterdyn/data.hpp"
#include "clusterdyn/jacobian.hpp"
#include "model/mjcf_detail.hpp"
#include "model/model_builder_detail.hpp"

namespace clusterdyn::mjcf {
namespace {

constexpr double kRankThreshold = 1e-9;

int rankOf(const MatX& A) {
  if (A.cols() == 0 || A.rows() == 0) return 0;
  Eigen::ColPivHouseholderQR<MatX> qr(A);
  qr.setThreshold(kRankThreshold);
  return static_cast<int>(qr.rank());
}

/// World-frame Jacobian rows (3 angular, 3 linear of the point) of a point fixed to link's
/// body at world position p.
Mat6X pointJacobian(const Model& m, Data& d, const std::string& link, const Vec3& p) {
  Mat6X J = Mat6X::Zero(6, m.nv);
  const int f = m.frameId(link);
  if (m.frames[f].body < 0) return J;  // the world: no motion
  Mat6X Jw(6, m.nv);
  frameJacobian(m, d, f, ReferenceFrame::World, Jw);  // [w; v at the world origin]
  J.topRows<3>() = Jw.topRows<3>();
  Mat3 px;
  px << 0, -p(2), p(1), p(2), 0, -p(0), -p(1), p(0), 0;
  J.bottomRows<3>() = Jw.bottomRows<3>() - px * Jw.topRows<3>();
  return J;
}

}  // namespace

void chooseDependentJoints(UrdfDescription& urdf, const std::set<std::string>& actuated) {
  bool anyMimic = false;
  for (const auto& j : urdf.joints) anyMimic = anyMimic || j.mimic.present;
  if (urdf.loops.empty() && !anyMimic) return;
  const Model m = detail::buildSpanningTree(urdf, ModelOptions());
  Data d(m);
  const VecX q0 = neutralConfiguration(m);
  forwardKinematics(m, d, q0);
  std::vector<MatX> blocks;
  for (const UrdfLoop& l : urdf.loops) {
    const int fp = m.frameId(l.predecessor), fs = m.frameId(l.successor);
    const Transform P = framePlacement(m, d, fp) * l.predecessorOrigin;
    const Transform S = framePlacement(m, d, fs) * l.successorOrigin;
    const Mat6X K = pointJacobian(m, d, l.predecessor, P.p) - pointJacobian(m, d, l.successor, S.p);
    blocks.push_back(l.type == JointType::Spherical ? MatX(K.bottomRows<3>()) : MatX(K));
  }
  std::set<int> dependent;  // velocity indices
  // Joints kept independent if possible: the actuated ones and the mimic leaders (a leader
  // marked dependent would leave its mimic cluster without a coordinate when loops are cut).
  std::set<std::string> preferred = actuated;
  for (const auto& j : urdf.joints)
    if (j.mimic.present) preferred.insert(j.mimic.joint);
  for (const auto& j : urdf.joints) {
    if (!j.mimic.present) continue;
    MatX row = MatX::Zero(1, m.nv);
    const int f = m.velocityIndex(j.name), l = m.velocityIndex(j.mimic.joint);
    if (f < 0 || l < 0) continue;  // the cluster builder reports it
    row(0, f) += 1.0;
    row(0, l) -= j.mimic.multiplier;
    blocks.push_back(row);
    dependent.insert(f);
  }
  int rows = 0;
  for (const auto& b : blocks) rows += static_cast<int>(b.rows());
  MatX K(rows, m.nv);
  rows = 0;
  for (const auto& b : blocks) {
    K.middleRows(rows, b.rows()) = b;
    rows += static_cast<int>(b.rows());
  }
  const int rank = rankOf(K);
  // A multi-dof joint (ball, free) that the equalities move is dependent as a whole (the cluster
  // builder's rule, docs/urdfplus.md 3.3); the 1-dof joints complete the rank. (Choosing 1-dof
  // dependents only would leave it dependent anyway and miscount: the builder could then not
  // name the direction it leaves free, e.g. a rod's spin on its ball joint.)
  for (int b = 0; b < m.nbodies; ++b) {
    if (m.nvs[b] <= 1 || K.middleCols(m.idx_v[b], m.nvs[b]).norm() <= kRankThreshold) continue;
    for (int k = 0; k < m.nvs[b]; ++k) dependent.insert(m.idx_v[b] + k);
  }
  // Candidates: 1-dof joints with a nonzero column, unactuated first, last in file order first.
  std::vector<int> candidates;
  for (int pass = 0; pass < 2; ++pass)
    for (auto it = urdf.joints.rbegin(); it != urdf.joints.rend(); ++it) {
      const int iv = m.velocityIndex(it->name);
      const int b = m.jointId(it->name);
      if (iv < 0 || b < 0 || m.nvs[b] != 1 || dependent.count(iv)) continue;
      if (K.col(iv).norm() <= kRankThreshold) continue;
      if ((preferred.count(it->name) > 0) == (pass == 0)) continue;
      candidates.push_back(iv);
    }
  auto columns = [&](const std::set<int>& cols) {
    MatX A(K.rows(), static_cast<int>(cols.size()));
    int k = 0;
    for (int c : cols) A.col(k++) = K.col(c);
    return A;
  };
  int current = rankOf(columns(dependent));
  for (int c : candidates) {
    if (current >= rank) break;
    std::set<int> trial = dependent;
    trial.insert(c);
    const int r = rankOf(columns(trial));
    if (r > current) {
      dependent = trial;
      current = r;
    }
  }
  for (auto& j : urdf.joints) {
    const int iv = m.velocityIndex(j.name);
    if (iv >= 0 && dependent.count(iv) && !j.mimic.present) {
      j.independent = false;
      j.independentGiven = true;
    }
  }
}

}  // namespace clusterdyn::mjcf
