// Independent coordinates of loops chosen by the reader (docs/mjcf.md section 3): MJCF has no
// URDF+ independent="false" mark, and a URDF+ file may leave a loop cluster's multi-dof joints
// unmarked. The constraint Jacobian K of the embedded loops and mimics on the spanning tree at
// q = 0 (MJCF: qpos0, drawn closed); the joints the file marks keep their marks; the unmarked
// multi-dof joints K moves are dependent as a whole, and a greedy column basis of K over the
// unmarked 1-dof joints completes them, unactuated joints first, last joint in file order first
// (the actuated joints, the mimic leaders and the first joints of a loop stay independent).
// Joint-equality followers (<mimic>) are dependent already. When a dependent multi-dof joint
// leaves a direction without a coordinate (a rod's spin on its ball joint), it is made
// independent as a whole instead if the 1-dof joints then complete a well-conditioned basis.
// Failing that, in the cluster builder's call, a ball joint with one free direction becomes
// three hinges (ball_hinges.cpp), the spin independent, if that gives a well-conditioned basis;
// the hinges carry the ball's damping and stiffness together (Model::ballHinges).
#include "model/loop_coordinates.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cluster/cut_loops.hpp"
#include "clusterdyn/configuration.hpp"
#include "clusterdyn/data.hpp"
#include "clusterdyn/jacobian.hpp"
#include "core/log.hpp"
#include "model/mjcf_detail.hpp"
#include "model/model_builder_detail.hpp"

namespace clusterdyn::detail {
namespace {

constexpr double kRankThreshold = 1e-9;
/// A multi-dof joint is chosen independent only when the dependent block then has its smallest
/// singular value at least this fraction of its largest (condition number at most 20), so that
/// the loop closure stays solvable well away from qpos0. (cd_rod_hip: 0.17. Cassie's achilles
/// rods: 0.016, the heel spring, tilted 2 degrees from the leg's plane, would carry the rod's
/// swing out of that plane, 0.06 rad per mrad, and the closure would fail beyond ~10 mrad of
/// that swing: rejected, those loops load cut.)
constexpr double kConditionThreshold = 0.05;

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

/// sigma_min / sigma_max of the blocks of A (columns and rows coupled through nonzero entries:
/// the loops) that hold a column marked in `focus`, the smallest: a ball replaced by hinges is
/// judged by its own loop, not by an unrelated loop of the model that the first choice keeps
/// (Cassie's plantar four-bars, 0.017, beside its achilles rods, 0.086).
double blockConditioning(const MatX& A, const std::vector<bool>& focus) {
  const int nr = static_cast<int>(A.rows()), nc = static_cast<int>(A.cols());
  std::vector<int> parent(nr + nc);  // union-find over rows 0..nr-1 and columns nr..
  for (int i = 0; i < nr + nc; ++i) parent[i] = i;
  auto find = [&](int i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (int c = 0; c < nc; ++c)
    for (int r = 0; r < nr; ++r)
      if (std::abs(A(r, c)) > kRankThreshold) parent[find(nr + c)] = find(r);
  double worst = 1.0;
  for (int c = 0; c < nc; ++c) {
    if (!focus[c]) continue;
    const int root = find(nr + c);
    std::vector<int> rows, cols;
    for (int r = 0; r < nr; ++r)
      if (find(r) == root) rows.push_back(r);
    for (int k = 0; k < nc; ++k)
      if (find(nr + k) == root) cols.push_back(k);
    MatX B(rows.size(), cols.size());
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t j = 0; j < cols.size(); ++j) B(i, j) = A(rows[i], cols[j]);
    const Eigen::JacobiSVD<MatX> svd(B);
    const VecX& sv = svd.singularValues();
    worst = std::min(worst, sv.size() > 0 && sv[0] > 0 ? sv[sv.size() - 1] / sv[0] : 0.0);
  }
  return worst;
}

}  // namespace

namespace {

/// What one choice found: whether the dependent set is a basis of K's column space, its
/// conditioning, and the unmarked spherical joints whose columns of K leave exactly one direction
/// free (name, the free direction in the ball's frame).
struct Outcome {
  bool basis = false;
  double ratio = 0.0;
  std::vector<std::pair<std::string, Vec3>> freeSpins;
};

bool chooseOnce(UrdfDescription& urdf, const std::set<std::string>& actuated,
                const std::set<std::string>& firstDependent, const ModelOptions& options,
                bool onlyForUnmarkedMultiDof, std::string* rejected, Outcome& out) {
  if (rejected) rejected->clear();
  bool anyMimic = false;
  for (const auto& j : urdf.joints) anyMimic = anyMimic || j.mimic.present;
  if (urdf.loops.empty() && !anyMimic) return false;
  // Couplings' relations are not in K below: their clusters keep the file's marks.
  if (onlyForUnmarkedMultiDof && !urdf.couplings.empty()) return false;
  const Model m = detail::buildSpanningTree(urdf, ModelOptions());
  std::map<int, const UrdfJoint*> marked;  // bodies of the joints the file marks
  for (const auto& j : urdf.joints)
    if (j.independentGiven && !j.mimic.present && m.jointId(j.name) >= 0)
      marked[m.jointId(j.name)] = &j;
  Data d(m);
  const VecX q0 = neutralConfiguration(m);
  forwardKinematics(m, d, q0);
  std::vector<MatX> blocks;
  for (const UrdfLoop& l : urdf.loops) {
    if (isCutLoop(l, options)) continue;
    const int fp = m.frameId(l.predecessor), fs = m.frameId(l.successor);
    const Transform P = framePlacement(m, d, fp) * l.predecessorOrigin;
    const Transform S = framePlacement(m, d, fs) * l.successorOrigin;
    const Mat6X K = pointJacobian(m, d, l.predecessor, P.p) - pointJacobian(m, d, l.successor, S.p);
    if (l.type == JointType::Spherical || l.type == JointType::Fixed) {  // MJCF connect, weld
      blocks.push_back(l.type == JointType::Spherical ? MatX(K.bottomRows<3>()) : MatX(K));
      continue;
    }
    // Revolute, prismatic, planar (URDF+): the directions the loop joint constrains, in world
    // axes (the rows of the cluster builder's makeLoop, rotated by P).
    const Vec3 a = l.axis.norm() > 0 ? Vec3(P.R * l.axis.normalized()) : Vec3(P.R.col(2));
    const Vec3 helper = std::abs(a.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
    const Vec3 t1 = (helper - helper.dot(a) * a).normalized(), t2 = a.cross(t1);
    std::vector<Vec3> rot, lin;
    if (l.type == JointType::Prismatic)
      rot = {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()}, lin = {t1, t2};
    else if (l.type == JointType::Planar)
      rot = {t1, t2}, lin = {a};
    else  // revolute, continuous
      rot = {t1, t2}, lin = {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()};
    MatX rowsOf(static_cast<int>(rot.size() + lin.size()), m.nv);
    int r = 0;
    for (const Vec3& u : rot) rowsOf.row(r++) = u.transpose() * K.topRows<3>();
    for (const Vec3& u : lin) rowsOf.row(r++) = u.transpose() * K.bottomRows<3>();
    blocks.push_back(rowsOf);
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
  // Joints the file marks dependent stay dependent (multi-dof ones as a whole).
  for (const auto& [b, j] : marked)
    if (!j->independent)
      for (int k = 0; k < m.nvs[b]; ++k) dependent.insert(m.idx_v[b] + k);
  int rows = 0;
  for (const auto& b : blocks) rows += static_cast<int>(b.rows());
  MatX K(rows, m.nv);
  rows = 0;
  for (const auto& b : blocks) {
    K.middleRows(rows, b.rows()) = b;
    rows += static_cast<int>(b.rows());
  }
  const int rank = rankOf(K);
  // The multi-dof joints (ball, free) that the equalities move: each is dependent or independent
  // as a whole (the cluster builder's rule, docs/urdfplus.md 3.3).
  std::vector<int> multiDof;  // bodies, last in file order first
  for (auto it = urdf.joints.rbegin(); it != urdf.joints.rend(); ++it) {
    const int b = m.jointId(it->name);
    if (b >= 0 && m.nvs[b] > 1 && !marked.count(b) &&
        K.middleCols(m.idx_v[b], m.nvs[b]).norm() > kRankThreshold)
      multiDof.push_back(b);
  }
  if (onlyForUnmarkedMultiDof && multiDof.empty()) return false;
  // Candidates completing the rank: 1-dof joints with a nonzero column, `firstDependent` (the
  // swings of a ball joint replaced by hinges) first, then the others, the preferred last; last
  // in file order first.
  std::vector<int> candidates;
  for (int pass = 0; pass < 3; ++pass)  // `firstDependent`, the others, the preferred
    for (auto it = urdf.joints.rbegin(); it != urdf.joints.rend(); ++it) {
      const int iv = m.velocityIndex(it->name);
      const int b = m.jointId(it->name);
      if (iv < 0 || b < 0 || m.nvs[b] != 1 || dependent.count(iv) || marked.count(b)) continue;
      if (K.col(iv).norm() <= kRankThreshold) continue;
      const int group = firstDependent.count(it->name) ? 0 : preferred.count(it->name) ? 2 : 1;
      if (group == pass) candidates.push_back(iv);
    }
  auto columns = [&](const std::set<int>& cols) {
    MatX A(K.rows(), static_cast<int>(cols.size()));
    int k = 0;
    for (int c : cols) A.col(k++) = K.col(c);
    return A;
  };
  // The mimic followers, the multi-dof joints not in `independentMultiDof` (whole), and a column
  // basis taken greedily over the candidates.
  auto choose = [&](const std::set<int>& independentMultiDof) {
    std::set<int> dep = dependent;
    for (int b : multiDof)
      if (!independentMultiDof.count(b))
        for (int k = 0; k < m.nvs[b]; ++k) dep.insert(m.idx_v[b] + k);
    int current = rankOf(columns(dep));
    for (int c : candidates) {
      if (current >= rank) break;
      std::set<int> trial = dep;
      trial.insert(c);
      const int r = rankOf(columns(trial));
      if (r > current) {
        dep = trial;
        current = r;
      }
    }
    return dep;
  };
  // Columns in excess of a basis plus rank missing: 0 for a basis of K's column space.
  auto defect = [&](const std::set<int>& dep) {
    const int r = rankOf(columns(dep));
    return static_cast<int>(dep.size()) - r + rank - r;
  };
  // The dependent block's smallest singular value relative to its largest.
  // The columns of `firstDependent` among `dep` (in the order of columns(dep)).
  auto focusColumns = [&](const std::set<int>& dep) {
    std::vector<bool> focus;
    for (int c : dep) focus.push_back(firstDependent.count(m.velocityNames[c]) > 0);
    return focus;
  };
  auto conditioning = [&](const std::set<int>& dep) {
    if (dep.empty()) return 1.0;
    const Eigen::JacobiSVD<MatX> svd(columns(dep));
    const VecX& sv = svd.singularValues();
    return sv[0] > 0 ? sv[sv.size() - 1] / sv[0] : 0.0;
  };
  // First every multi-dof joint dependent (the closure solves its quaternion). When that leaves
  // a direction without a coordinate (a rod's spin on its ball joint: the ball's columns are
  // rank-deficient), the multi-dof joints become independent as a whole (quaternion in y) one by
  // one, last in file order first, each kept when it lowers the defect; the result replaces the
  // first choice only when it is a basis and well conditioned.
  std::set<int> chosen = choose({});
  std::set<int> independentMultiDof;
  if (defect(chosen) > 0) {
    std::set<int> trialMultiDof;
    std::set<int> trial = chosen;
    for (int b : multiDof) {
      std::set<int> more = trialMultiDof;
      more.insert(b);
      const std::set<int> next = choose(more);
      if (defect(next) < defect(trial)) {
        trialMultiDof = more;
        trial = next;
      }
    }
    const double ratio = defect(trial) == 0 ? conditioning(trial) : 0.0;
    if (defect(trial) == 0 && ratio >= kConditionThreshold) {
      chosen = trial;
      independentMultiDof = trialMultiDof;
    } else if (defect(trial) == 0 && rejected) {
      std::string names;
      for (int b : trialMultiDof) names += (names.empty() ? "'" : ", '") + m.jointNames[b] + "'";
      char numbers[160];
      std::snprintf(numbers, sizeof numbers,
                    "sigma_min/sigma_max = %.2g, below the threshold %.2g (condition number "
                    "%.0f > %.0f)",
                    ratio, kConditionThreshold, 1.0 / ratio, 1.0 / kConditionThreshold);
      *rejected = "; the reader did not make it independent as a whole: with " +
                  std::string(trialMultiDof.size() > 1 ? "joints " : "joint ") + names +
                  " independent (quaternion in y), the dependent joints' columns of the "
                  "constraint Jacobian at qpos0 have " +
                  numbers + ": too stiff a choice, the loop closure would fail close to qpos0";
    }
  }
  dependent = chosen;
  out.basis = defect(chosen) == 0;
  out.ratio = firstDependent.empty() ? conditioning(chosen)
                                     : blockConditioning(columns(chosen), focusColumns(chosen));
  for (int b : multiDof) {
    if (m.joints[b].type != JointType::Spherical) continue;
    const MatX Kb = K.middleCols(m.idx_v[b], 3);
    if (rankOf(Kb) != 2) continue;
    const Eigen::JacobiSVD<MatX> svd(Kb, Eigen::ComputeFullV);
    Vec3 a = svd.matrixV().col(2);  // the null vector: the ball's free direction, child frame
    int big = 0;
    for (int i = 1; i < 3; ++i)
      if (std::abs(a[i]) > std::abs(a[big])) big = i;
    if (a[big] < 0) a = -a;  // a deterministic sign
    out.freeSpins.emplace_back(m.jointNames[b], a);
  }
  bool changed = false;
  for (auto& j : urdf.joints) {
    const int b = m.jointId(j.name);  // (velocityIndex names 1-dof joints only)
    if (b < 0 || j.mimic.present || marked.count(b)) continue;
    if (m.nvs[b] == 1 && dependent.count(m.idx_v[b])) {
      j.independent = false;
      j.independentGiven = changed = true;
    } else if (independentMultiDof.count(b)) {
      // A multi-dof joint inside a loop is dependent unless marked independent (docs/urdfplus.md
      // 3.3): mark the ones chosen independent.
      j.independent = j.independentGiven = changed = true;
    }
  }
  return changed;
}

}  // namespace

bool chooseLoopCoordinates(UrdfDescription& urdf, const std::set<std::string>& actuated,
                           const ModelOptions& options, bool onlyForUnmarkedMultiDof,
                           std::string* rejected) {
  const UrdfDescription original = onlyForUnmarkedMultiDof ? urdf : UrdfDescription();
  Outcome first;
  const bool changed =
      chooseOnce(urdf, actuated, {}, options, onlyForUnmarkedMultiDof, rejected, first);
  // The cluster builder's call only (the MJCF reader's call at parse time does not know which
  // loops the build cuts; a cut loop keeps its ball joint): a ball joint with a free spin, when
  // the choice is not a well-conditioned basis, as three hinges (ball_hinges.cpp).
  if (!onlyForUnmarkedMultiDof || first.freeSpins.empty() || first.basis) return changed;
  UrdfDescription expanded = original;
  std::set<std::string> preferred = actuated, swings;
  std::string names, refused;
  for (const auto& [name, a] : first.freeSpins) {
    const UrdfJoint* ball = nullptr;
    for (const UrdfJoint& j : original.joints)
      if (j.name == name) ball = &j;
    if (ball == nullptr) continue;
    // The hinges carry the ball's damping and stiffness exactly (Model::ballHinges), not its
    // armature (J^T A J depends on the swing angles) nor its limit (a cone on the rotation).
    if (ball->hasLimit || (ball->armature != 0.0 && options.jointDynamics)) {
      refused +=
          "; the reader did not replace joint '" + name +
          "' by three revolute joints (its spin free): " +
          (ball->hasLimit ? std::string("it has a limit (range), which hinges cannot express")
                          : std::string("three hinges cannot carry its armature exactly (on the "
                                        "hinges it is J^T A J, J depending on the swing angles; "
                                        "load without joint dynamics, ModelOptions::jointDynamics "
                                        "= false, or cut the loop)"));
      continue;
    }
    expandBallIntoHinges(expanded, name, a);
    const BallHingeNames n = ballHingeNames(name);
    preferred.insert(n.spin);
    swings.insert(n.swing1);
    swings.insert(n.swing2);
    names += (names.empty() ? "'" : ", '") + name + "'";
  }
  if (rejected) *rejected += refused;
  if (names.empty()) return changed;
  Outcome second;
  const bool changedExpanded =
      chooseOnce(expanded, preferred, swings, options, false, nullptr, second);
  if (!(changedExpanded && second.basis && second.ratio >= kConditionThreshold)) {
    if (rejected) {
      char ratio[64];
      std::snprintf(ratio, sizeof ratio, "%.2g", second.ratio);
      *rejected += "; replaced by three revolute joints, ball joint(s) " + names +
                   (second.basis ? " give a basis with sigma_min/sigma_max = " + std::string(ratio)
                                 : std::string(" give no basis of the constraint rows")) +
                   " either";
    }
    return changed;
  }
  for (const auto& [name, a] : first.freeSpins) {
    if (names.find("'" + name + "'") == std::string::npos) continue;
    const BallHingeNames n = ballHingeNames(name);
    log::warn(
        "{}: ball joint '{}' inside an embedded loop leaves its spin about ({:.4g}, {:.4g}, "
        "{:.4g}) (its frame) free, and neither it dependent nor it independent as a whole "
        "gives a regular basis: replaced by three revolute joints '{}', '{}' (swings, "
        "dependent) and '{}' (the spin, independent) through massless links '{}', '{}' "
        "(sigma_min/sigma_max of the dependent columns {:.2g})",
        original.source, name, a.x(), a.y(), a.z(), n.swing1, n.swing2, n.spin, n.link1, n.link2,
        second.ratio);
  }
  urdf = std::move(expanded);
  if (rejected) rejected->clear();
  return true;
}

}  // namespace clusterdyn::detail

namespace clusterdyn::mjcf {

void chooseDependentJoints(UrdfDescription& urdf, const std::set<std::string>& actuated) {
  detail::chooseLoopCoordinates(urdf, actuated, ModelOptions(), false);
}

}  // namespace clusterdyn::mjcf
