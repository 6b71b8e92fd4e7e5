// The loop closure: spanning configurations from independent coordinates (damped Newton on
// the dependent coordinates, cluster by cluster; from a closed warm start, predictor-corrector
// continuation of its assembly branch), velocities v = G y_dot, and projection onto the
// constraint manifold. Every tolerance is a ClosureSettings field (cluster_algorithms.hpp).
#include "cluster/loop_closure.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>

#include "cluster/cluster_kinematics.hpp"
#include "cluster/independent_joints.hpp"
#include "cluster/loop_constraints.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "core/small_lu.hpp"
#include "model/joint_types.hpp"

namespace clusterdyn {

namespace detail {

namespace {

inline int qIndex(const Model& tree, const Cluster& c, int localV) {
  return tree.idx_q[tree.velocityOwner[c.v0 + localV]];
}

/// max |phi| of cluster k at q (computes the cluster's placements, for loop joints, and
/// residual). Explicit relations are linear in q: no placements (no sin / cos).
double residualAt(const ClusterModel& cm, ClusterData& data, int k,
                  const Eigen::Ref<const VecX>& q) {
  if (cm.clusters[k].implicit()) clusterPlacements(cm, data, k, q);
  constraintResidual(cm, data, k, q);
  const VecX& phi = detail::scratch(data)[k].phi;
  return phi.size() ? phi.cwiseAbs().maxCoeff() : 0.0;
}

/// Unit quaternion (x, y, z, w) at q times exp(w) (body-frame rotation increment), in place.
void rotateQuaternion(double* q, const Vec3& w) {
  const Eigen::Quaterniond q0(q[3], q[0], q[1], q[2]);
  const double th = w.norm();
  const Eigen::Quaterniond dq = th < 1e-12
                                    ? Eigen::Quaterniond(1.0, 0.5 * w.x(), 0.5 * w.y(), 0.5 * w.z())
                                    : Eigen::Quaterniond(Eigen::AngleAxisd(th, w / th));
  Eigen::Quaterniond q1 = q0 * dq;
  q1.normalize();
  if (q1.dot(q0) < 0) q1.coeffs() *= -1.0;
  Eigen::Map<Eigen::Vector4d> out(q);
  out = q1.coeffs();
}

/// Moves joint j's positions q (nq values) along the body-frame tangent alpha dv (nv values):
/// a retraction whose derivative at alpha = 0 is the joint's velocity map (the closure's Newton
/// steps on the manifold, Absil et al. 2008, §4.1); additive for 1-dof joints.
void retractJoint(const Joint& j, double* q, const double* dv, double alpha) {
  switch (j.type) {
    case JointType::Spherical:
      rotateQuaternion(q, alpha * Vec3(dv[0], dv[1], dv[2]));
      break;
    case JointType::Planar: {  // (x, y) in the parent's plane axes, (vx, vy) in the child's
      const double ct = std::cos(q[2]), st = std::sin(q[2]);
      q[0] += alpha * (ct * dv[0] - st * dv[1]);
      q[1] += alpha * (st * dv[0] + ct * dv[1]);
      q[2] += alpha * dv[2];
      break;
    }
    case JointType::Floating: {  // v = [omega; v] in body coordinates
      const Eigen::Quaterniond r(q[6], q[3], q[4], q[5]);
      Eigen::Map<Vec3>(q) += alpha * (r.normalized() * Vec3(dv[3], dv[4], dv[5]));
      rotateQuaternion(q + 3, alpha * Vec3(dv[0], dv[1], dv[2]));
      break;
    }
    default:
      for (int a = 0; a < j.nv; ++a) q[a] += alpha * dv[a];
  }
}

/// Dependent positions moved along alpha dq (dependent velocity coordinates): q += alpha dq for
/// 1-dof joints, the joint's retraction for a multi-dof joint (dependent as a whole, its
/// velocities consecutive in c.dependent).
void stepDependent(const ClusterModel& cm, int k, Eigen::Ref<VecX> q, const VecX& dq,
                   double alpha) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const int nd = static_cast<int>(c.dependent.size());
  for (int i = 0; i < nd;) {
    const int b = tree.velocityOwner[c.v0 + c.dependent[i]];
    const Joint& joint = tree.joints[b];
    if (joint.nv == 1) {
      q[tree.idx_q[b]] += alpha * dq[i++];
      continue;
    }
    retractJoint(joint, q.data() + tree.idx_q[b], dq.data() + i, alpha);
    i += joint.nv;
  }
}

/// True when every joint of cluster c is 1-dof: one position per velocity, additive steps (the
/// branch-following continuation and exact step reversal need it).
inline bool scalarJoints(const Cluster& c) { return c.nv == c.nbodies; }

/// The dependent joints' positions of cluster k in q set from `src` (the cluster's nq positions):
/// every position of a multi-dof joint (dependent as a whole), one of a dependent 1-dof joint.
void setDependentPositions(const ClusterModel& cm, int k, Eigen::Ref<VecX> q, const double* src) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const int nd = static_cast<int>(c.dependent.size());
  for (int i = 0; i < nd;) {
    const int b = tree.velocityOwner[c.v0 + c.dependent[i]];
    for (int a = tree.idx_q[b]; a < tree.idx_q[b] + tree.nqs[b]; ++a) q[a] = src[a - c.q0];
    i += tree.nvs[b];
  }
}

/// Undoes stepDependent(alpha): reversed step for 1-dof joints, else the saved positions.
void undoStep(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q, const VecX& dq,
              double alpha) {
  const Cluster& c = cm.clusters[k];
  if (scalarJoints(c))
    stepDependent(cm, k, q, dq, -alpha);
  else
    q.segment(c.q0, c.nq) = detail::scratch(data)[k].qSaved;
}

enum class NewtonResult { Converged, Singular, Failed };

/// Damped Newton on the selected rows from the dependent coordinates in q (Nocedal and Wright
/// 2006, §11.2: Newton step, scaled to at most maxStep, halved until max |phi| decreases).
/// Converged: max |phi| <= residualTolerance and the final Kd is well conditioned; Singular:
/// Kd lost rank (at the solution or on the way); Failed: no decrease or iterations exhausted.
NewtonResult newton(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q) {
  const ClosureSettings& s = kClosureSettings;
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  double res = residualAt(cm, data, k, q);
  double previous = std::numeric_limits<double>::infinity();
  for (int it = 0;; ++it) {
    data.lastIterations = it;
    data.lastResidual = res;
    if (!std::isfinite(res)) return NewtonResult::Failed;
    constraintJacobian(cm, data, k);  // at q (poses from residualAt)
    const double scale = gatherDependentBlock(cm, data, k);
    double pivotRatio = 0.0;
    const bool regular = factorDependentBlock(w, scale, &pivotRatio);
    // Converged: at tolerance, keep polishing (ill-conditioned loops gain accuracy) while
    // Newton still improves the residual tenfold.
    const bool atTolerance = res <= s.residualTolerance;
    if (atTolerance && (res <= s.exactResidual || res > 0.1 * previous))
      return regular ? NewtonResult::Converged : NewtonResult::Singular;
    if (it >= s.maxIterations) return NewtonResult::Failed;
    // Near-singular Kd with a (nearly) closed loop: a branch or dead point. Far from closure
    // keep stepping while the LU has usable pivots (the line search guards the step).
    if (!regular && res <= std::sqrt(s.residualTolerance)) return NewtonResult::Singular;
    if (!(pivotRatio > 0.0)) return NewtonResult::Failed;
    for (int i = 0; i < nd; ++i) w.dq[i] = -w.phi[c.selectedRows[i]];
    luSolveInPlace(w.Kd, w.piv, w.dq);
    const double step = nd ? w.dq.cwiseAbs().maxCoeff() : 0.0;
    if (!std::isfinite(step)) return NewtonResult::Failed;
    // Explicit relations (couplings, mimics) are linear: the full step is exact.
    double alpha = c.implicit() && step > s.maxStep ? s.maxStep / step : 1.0;
    double trial = std::numeric_limits<double>::infinity();
    if (!scalarJoints(c)) w.qSaved = q.segment(c.q0, c.nq);
    for (int h = 0; h <= s.maxStepHalvings; ++h, alpha *= 0.5) {
      stepDependent(cm, k, q, w.dq, alpha);
      trial = residualAt(cm, data, k, q);
      if (trial < res || s.maxStepHalvings == 0) break;
      undoStep(cm, data, k, q, w.dq, alpha);
    }
    if (!c.implicit() && trial <= s.residualTolerance) {
      // Explicit relations are linear in q and K is constant: the full Newton step is exact up
      // to rounding, and Kd (factorized above) is the same at the solution.
      data.lastIterations = it + 1;
      data.lastResidual = trial;
      return regular ? NewtonResult::Converged : NewtonResult::Singular;
    }
    if (!(trial < res) && s.maxStepHalvings > 0) {
      // No step reduces the residual: converged to rounding if at tolerance, else stuck.
      residualAt(cm, data, k, q);
      if (!atTolerance) return NewtonResult::Failed;
      constraintJacobian(cm, data, k);
      const bool ok = factorDependentBlock(w, gatherDependentBlock(cm, data, k), nullptr);
      return ok ? NewtonResult::Converged : NewtonResult::Singular;
    }
    previous = res;
    res = trial;
  }
}

/// Positions of joint j between start (t = 0) and target (t = 1) along its geodesic: linear for
/// 1-dof and planar joints, the shorter great-circle arc of a quaternion (Shoemake 1985, slerp)
/// with a floating joint's position linear.
void interpolateJoint(const Joint& j, const double* start, const double* target, double t,
                      double* q) {
  const int o = quaternionOffset(j.type);
  for (int a = 0; a < j.nq; ++a)
    if (o < 0 || a < o || a >= o + 4) q[a] = start[a] + t * (target[a] - start[a]);
  if (o < 0) return;
  const Eigen::Quaterniond q0(start[o + 3], start[o], start[o + 1], start[o + 2]);
  const Eigen::Quaterniond q1(target[o + 3], target[o], target[o + 1], target[o + 2]);
  Eigen::Map<Eigen::Vector4d>(q + o) = q0.slerp(t, q1).normalized().coeffs();
}

/// Newton along a straight path (geodesic per joint) of the independent coordinates, from the
/// cluster positions `start` (size nq of the cluster, any closed or nearly closed configuration)
/// to the target independent coordinates held in q, in `steps` equal steps, each warm-started
/// from the last (natural-parameter continuation, Allgower and Georg 2003, §2). Used when the
/// warm start has no tangent (not closed, or singular); followBranch is the predictor-corrector
/// version.
NewtonResult continuation(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q,
                          const double* start, int steps, int* iterations) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  ClusterWorkspace& w = detail::scratch(data)[k];
  w.qTarget = q.segment(c.q0, c.nq);
  setDependentPositions(cm, k, q, start);
  auto setIndependent = [&](double t, bool last) {
    forEachIndependentJoint(cm, c, [&](int b, int, int, int) {
      const int iq = tree.idx_q[b], local = iq - c.q0;
      if (last)
        q.segment(iq, tree.nqs[b]) = w.qTarget.segment(local, tree.nqs[b]);
      else if (tree.nvs[b] == 1)
        q[iq] = start[local] + t * (w.qTarget[local] - start[local]);
      else
        interpolateJoint(tree.joints[b], start + local, w.qTarget.data() + local, t, q.data() + iq);
    });
  };
  NewtonResult r = NewtonResult::Failed;
  for (int step = 1; step <= steps; ++step) {
    setIndependent(static_cast<double>(step) / steps, step == steps);
    r = newton(cm, data, k, q);
    *iterations += data.lastIterations;
    if (r != NewtonResult::Converged) break;
  }
  setIndependent(1.0, true);
  return r;
}

/// The branch tangent at the closed configuration just solved (w.K and the LU of w.Kd are at
/// the cluster's positions in q, as newton() leaves them on Converged): closureGd = Kd^-1 Ki,
/// the negated dependent rows of G (Chignoli et al. 2023, eq. 6), for the next predictor.
void storeTangent(const ClusterModel& cm, ClusterData& data, int k, const Eigen::Ref<VecX>& q) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  for (int i = 0; i < nd; ++i)
    for (int j = 0; j < c.ny; ++j) w.closureGd(i, j) = w.K(c.selectedRows[i], c.independent[j]);
  luSolveInPlace(w.Kd, w.piv, w.closureGd);
  w.qTangent = q.segment(c.q0, c.nq);
  w.tangentValid = true;
}

/// Makes w.closureGd the branch tangent at the cluster positions `warm` (size nq): reuses the
/// stored one when it belongs to exactly these positions (the normal case: the warm start is
/// the last solution), else evaluates it there. False when `warm` is not closed (max |phi| >
/// stateTolerance) or Kd is singular there: no branch to follow. Leaves the independent
/// positions of the cluster in q as they were and its dependent ones at `warm`.
bool tangentAt(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q,
               const double* warm) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  if (w.tangentValid &&
      std::equal(warm, warm + c.nq, w.qTangent.data()))  // exact: the same configuration
    return true;
  w.tangentValid = false;
  for (int j = 0; j < c.ny; ++j) w.tmpd[j] = q[qIndex(cm.treeModel, c, c.independent[j])];
  q.segment(c.q0, c.nq) = Eigen::Map<const VecX>(warm, c.nq);
  const double res = residualAt(cm, data, k, q);
  bool ok = false;
  if (std::isfinite(res) && res <= kClosureSettings.stateTolerance) {
    constraintJacobian(cm, data, k);
    if (factorDependentBlock(w, gatherDependentBlock(cm, data, k), nullptr)) {
      storeTangent(cm, data, k, q);
      ok = true;
    }
  }
  for (int j = 0; j < c.ny; ++j) q[qIndex(cm.treeModel, c, c.independent[j])] = w.tmpd[j];
  return ok;
}

/// Predictor-corrector continuation (Allgower and Georg 2003, §2.2) of the assembly branch
/// through the closed, regular warm start `warm` (tangent in w.closureGd, from tangentAt) to the
/// independent coordinates in q, in `steps` equal steps along the straight path in y: each step
/// predicts the dependent positions with the tangent (v = G y_dot integrated over the step),
/// corrects them by Newton, and is accepted when the correction is small against the step
/// (ClosureSettings::branchCorrection, then the trapezoid test with the new point's tangent,
/// branchTrapezoid). Converged: the dependent positions in q are on the warm start's branch;
/// Failed with *otherBranch set: a test failed (Newton went to another branch, or the branch
/// bends too fast for the step).
NewtonResult followBranch(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q,
                          const double* warm, int steps, int* iterations, bool* otherBranch) {
  const ClosureSettings& s = kClosureSettings;
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  // Target y in tmpd (tangentAt uses tmpd: it must run first, and not inside this loop).
  for (int j = 0; j < c.ny; ++j) w.tmpd[j] = q[qIndex(cm.treeModel, c, c.independent[j])];
  q.segment(c.q0, c.nq) = Eigen::Map<const VecX>(warm, c.nq);
  NewtonResult r = NewtonResult::Converged;
  for (int step = 1; step <= steps; ++step) {
    // Predictor: qd -= Gd dy with Gd at the last point (closed; q holds it).
    const double t = static_cast<double>(step) / steps;
    double length = 0.0;
    for (int i = 0; i < nd; ++i)
      w.qStepStart[i] = w.qPredicted[i] = q[qIndex(cm.treeModel, c, c.dependent[i])];
    for (int j = 0; j < c.ny; ++j) {
      const int iq = qIndex(cm.treeModel, c, c.independent[j]);
      const double y0 = warm[iq - c.q0];
      const double y1 = step == steps ? w.tmpd[j] : y0 + t * (w.tmpd[j] - y0);
      const double dy = y1 - q[iq];
      length = std::max(length, std::abs(dy));
      for (int i = 0; i < nd; ++i) w.qPredicted[i] -= w.closureGd(i, j) * dy;
      w.qStepDy[j] = dy;
      q[iq] = y1;
    }
    for (int i = 0; i < nd; ++i) {
      const int iq = qIndex(cm.treeModel, c, c.dependent[i]);
      length = std::max(length, std::abs(w.qPredicted[i] - q[iq]));
      q[iq] = w.qPredicted[i];
    }
    // Corrector.
    r = newton(cm, data, k, q);
    *iterations += data.lastIterations;
    if (r != NewtonResult::Converged) break;
    double correction = 0.0;
    for (int i = 0; i < nd; ++i)
      correction = std::max(correction,
                            std::abs(q[qIndex(cm.treeModel, c, c.dependent[i])] - w.qPredicted[i]));
    bool accepted = correction <= s.branchCorrection * length + s.stateTolerance;
    if (accepted) {
      // Trapezoid test with the tangents at both ends, qd1 ~ qd0 - (Gd0 + Gd1) dy / 2: it
      // catches a landing on another branch near the branch point, where the branches are too
      // close for the predictor test (the two tests together see any kink of size ~ the step).
      storeTangent(cm, data, k, q);
      double trapezoid = 0.0;
      for (int i = 0; i < nd; ++i) {
        double estimate = 0.5 * (w.qStepStart[i] + w.qPredicted[i]);
        for (int j = 0; j < c.ny; ++j) estimate -= 0.5 * w.closureGd(i, j) * w.qStepDy[j];
        trapezoid =
            std::max(trapezoid, std::abs(q[qIndex(cm.treeModel, c, c.dependent[i])] - estimate));
      }
      accepted = trapezoid <= s.branchTrapezoid * length + s.stateTolerance;
    }
    if (!accepted) {
      w.tangentValid = false;
      *otherBranch = true;
      r = NewtonResult::Failed;
      break;
    }
  }
  for (int j = 0; j < c.ny; ++j) q[qIndex(cm.treeModel, c, c.independent[j])] = w.tmpd[j];
  return r;
}

}  // namespace

Status solveClusterPositions(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q,
                             const double* warmStart) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  // Branch following needs one additive position per velocity: 1-dof joints only (a cluster
  // with a multi-dof joint is solved by Newton on the manifold from the warm start, then by
  // natural-parameter continuation from it and from the reference configuration).
  const bool path = c.implicit() && scalarJoints(c);
  // Natural-parameter continuation moves the independent coordinates (geodesics of multi-dof ones)
  // and corrects by Newton on the manifold: every implicit cluster.
  const bool stepped = c.implicit();
  int iterations = 0;
  bool singular = false, otherBranch = false;
  auto attempt = [&](NewtonResult r) {
    if (r == NewtonResult::Singular) singular = true;
    return r == NewtonResult::Converged;
  };
  auto differs = [&](const double* start) {
    bool d = false;
    forEachIndependentJoint(cm, c, [&](int b, int, int, int) {
      for (int iq = cm.treeModel.idx_q[b]; iq < cm.treeModel.idx_q[b] + cm.treeModel.nqs[b]; ++iq)
        d = d || start[iq - c.q0] != q[iq];
    });
    return d;
  };
  bool ok = false, branchLost = false, singularOnBranch = false;
  if (path && warmStart && tangentAt(cm, data, k, q, warmStart)) {
    // A closed, regular warm start: follow its branch (one predictor-corrector step, then 5,
    // then 33: odd, so that a jump from -a to a does not step onto a branch point at 0), and
    // only its branch.
    for (int steps : {1, 5, 33}) {
      if (steps > 1 && !tangentAt(cm, data, k, q, warmStart)) break;  // overwritten by steps
      if ((ok = attempt(followBranch(cm, data, k, q, warmStart, steps, &iterations, &otherBranch))))
        break;
    }
    data.lastIterations = iterations;
    if (ok) return Status::Ok;
    // Failure path: the branch does not reach y. Diagnose with the plain solves below (is y
    // reachable at all, on another branch?), and refuse their solution.
    branchLost = true;
    singularOnBranch = singular;
    for (int i : c.dependent) {
      const int iq = qIndex(cm.treeModel, c, i);
      q[iq] = warmStart[iq - c.q0];
    }
  }
  // No branch to follow (the warm start is not closed, or singular; projections): Newton.
  // 1. Newton from the warm start (the dependent coordinates in q).
  ok = attempt(newton(cm, data, k, q));
  iterations += data.lastIterations;
  // 2. Continuation from the warm start, 4 then 32 steps.
  if (!ok && stepped && warmStart && differs(warmStart))
    for (int steps : {4, 32})
      if ((ok = attempt(continuation(cm, data, k, q, warmStart, steps, &iterations)))) break;
  // 3. Newton, then continuation, from the model's reference configuration.
  const double* reference = cm.qReference.data() + c.q0;
  if (!ok) {
    setDependentPositions(cm, k, q, reference);
    ok = attempt(newton(cm, data, k, q));
    iterations += data.lastIterations;
  }
  if (!ok && stepped && differs(reference))
    for (int steps : {4, 32})
      if ((ok = attempt(continuation(cm, data, k, q, reference, steps, &iterations)))) break;
  data.lastIterations = iterations;
  if (ok && !branchLost) {
    if (path) storeTangent(cm, data, k, q);
    return Status::Ok;
  }
  if (path) w.tangentValid = false;
  if (ok)  // closed on another branch: never returned in place of the warm start's branch
    return fail(data.treeData, Status::ConstraintFailure,
                "cluster '%s': the warm start's assembly branch does not reach y (%s); y closes on "
                "another branch (a branch or dead point lies between): solve in smaller steps or "
                "warm-start on the wanted branch",
                c.name.c_str(),
                singularOnBranch ? "a singular configuration on the way"
                : otherBranch    ? "Newton jumped branch in 33 continuation steps"
                                 : "Newton did not converge in 33 continuation steps");
  if (singular) {
    residualAt(cm, data, k, q);
    constraintJacobian(cm, data, k);
    return singularDependentBlock(cm, data, k, "at the closure solution");
  }
  return fail(data.treeData, Status::ConstraintFailure,
              "cluster '%s': loop closure did not converge (residual %.3g after %d iterations, "
              "from the warm start and from the reference configuration)",
              c.name.c_str(), data.lastResidual, iterations);
}

Status closeClusterPositions(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q) {
  const ClosureSettings& s = kClosureSettings;
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  if (nd == 0) {  // nothing to solve for: the constraint holds or it does not
    const double res = residualAt(cm, data, k, q);
    data.lastResidual = res;
    if (std::isfinite(res) && res <= s.referenceTolerance) return Status::Ok;
    return fail(data.treeData, Status::ConstraintFailure,
                "the cluster has no dependent coordinate to close its loop (residual %.3g)", res);
  }
  for (int it = 0; it <= s.referenceMaxIterations; ++it) {
    const double res = residualAt(cm, data, k, q);
    data.lastResidual = res;
    if (!std::isfinite(res)) break;
    if (res <= s.referenceTolerance) return Status::Ok;
    constraintJacobian(cm, data, k);
    MatX Kd(w.K.rows(), nd);
    for (int j = 0; j < nd; ++j) Kd.col(j) = w.K.col(c.dependent[j]);
    Eigen::ColPivHouseholderQR<MatX> qr(Kd);
    VecX dq = -qr.solve(w.phi);
    const double step = dq.size() ? dq.cwiseAbs().maxCoeff() : 0.0;
    if (!std::isfinite(step)) break;
    if (step > s.maxStep) dq *= s.maxStep / step;
    stepDependent(cm, k, q, dq, 1.0);
  }
  return fail(data.treeData, Status::ConstraintFailure, "residual %.3g after %d Gauss-Newton steps",
              data.lastResidual, s.referenceMaxIterations);
}

}  // namespace detail

namespace detail {
Status keepWarmStartUsable(const ClusterModel& cm, ClusterData& data, Status s) {
  // Only failures are inspected: on success q passed checkConfiguration (finite), so the hot
  // path pays nothing here.
  if (s != Status::Ok && data.model == &cm &&
      (s == Status::ConstraintFailure || !data.q.allFinite()))
    data.q = cm.qReference;  // same size: no allocation
  return s;
}
}  // namespace detail

namespace {
Status solveLoopClosureFromWarmStart(const ClusterModel& cm, ClusterData& data, ConstVecRef y) {
  int totalIterations = 0;
  std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    ClusterWorkspace& w = ws[k];
    // The warm start of the cluster (its positions before y is written), for continuation.
    const bool keep = c.implicit() && c.nq <= w.qWarm.size();
    if (keep) w.qWarm.head(c.nq) = data.q.segment(c.q0, c.nq);
    for (int i = c.yq0; i < c.yq0 + c.nyq; ++i) data.q[cm.independentPosition[i]] = y[i];
    if (!c.constrained()) continue;
    CDYN_TRY(detail::solveClusterPositions(cm, data, k, data.q, keep ? w.qWarm.data() : nullptr));
    totalIterations = std::max(totalIterations, data.lastIterations);
  }
  data.lastIterations = totalIterations;
  return detail::checkConfiguration(cm.treeModel, data.treeData, data.q) == Status::Ok
             ? detail::ok(data.treeData)
             : Status::NotUnitQuaternion;
}
}  // namespace

Status setClosureWarmStart(const ClusterModel& cm, ClusterData& data, ConstVecRef q) {
  if (data.model != &cm)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  CDYN_TRY(detail::checkVector(data.treeData, q, cm.treeModel.nq, "q_guess"));
  CDYN_TRY(detail::checkConfiguration(cm.treeModel, data.treeData, q));
  data.q = q;
  return detail::ok(data.treeData);
}

Status solveLoopClosure(const ClusterModel& cm, ClusterData& data, ConstVecRef y) {
  if (data.model != &cm)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  CDYN_TRY(detail::checkVector(data.treeData, y, cm.nyq, "y"));
  return detail::keepWarmStartUsable(cm, data, solveLoopClosureFromWarmStart(cm, data, y));
}

namespace {
/// v = G y_dot cluster by cluster, with G at data.q.
Status velocitiesFromIndependent(const ClusterModel& cm, ClusterData& data, ConstVecRef ydot) {
  CDYN_TRY(detail::clusterVelocityPass(cm, data, data.q, nullptr, detail::Bias::Skip,
                                       detail::StateCheck::Skip));
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained())
      data.v.segment(c.v0, c.nv).noalias() = ws[k].G * ydot.segment(c.y0, c.ny);
    else
      data.v.segment(c.v0, c.nv) = ydot.segment(c.y0, c.ny);
  }
  return Status::Ok;
}
}  // namespace

Status independentToSpanning(const ClusterModel& cm, ClusterData& data, ConstVecRef y,
                             ConstVecRef ydot) {
  CDYN_TRY(detail::checkVector(data.treeData, ydot, cm.ny, "ydot"));
  CDYN_TRY(solveLoopClosure(cm, data, y));
  CDYN_TRY(velocitiesFromIndependent(cm, data, ydot));
  return detail::ok(data.treeData);
}

Status spanningToIndependent(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                             ConstVecRef v, Eigen::Ref<VecX> y, Eigen::Ref<VecX> ydot) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  if (y.size() != cm.nyq || ydot.size() != cm.ny)
    return detail::fail(data.treeData, Status::InvalidSize, "y / ydot must have sizes %d / %d",
                        cm.nyq, cm.ny);
  for (int k = 0; k < cm.nyq; ++k) y[k] = q[cm.independentPosition[k]];
  for (int k = 0; k < cm.ny; ++k) ydot[k] = v[cm.independentVelocity[k]];
  return detail::ok(data.treeData);
}

Status projectToConstraints(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                            ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  data.q = q;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    if (!cm.clusters[k].constrained()) continue;
    const Status s = detail::solveClusterPositions(cm, data, k, data.q, nullptr);
    if (s != Status::Ok) return detail::keepWarmStartUsable(cm, data, s);
  }
  CDYN_TRY(detail::clusterVelocityPass(cm, data, data.q, nullptr, detail::Bias::Skip,
                                       detail::StateCheck::Skip));
  std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      data.v.segment(c.v0, c.nv) = v.segment(c.v0, c.nv);
      continue;
    }
    ClusterWorkspace& w = ws[k];
    for (int j = 0; j < c.ny; ++j) w.tmpd[j] = v[c.v0 + c.independent[j]];
    data.v.segment(c.v0, c.nv).noalias() = w.G * w.tmpd;
  }
  return detail::ok(data.treeData);
}

Status clusterConstraintMatrices(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                                 ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  CDYN_TRY(detail::clusterVelocityPass(cm, data, q, v.data(), detail::Bias::Compute,
                                       detail::StateCheck::Skip));
  return detail::ok(data.treeData);
}

}  // namespace clusterdyn
